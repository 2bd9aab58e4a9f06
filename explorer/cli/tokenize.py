"""`tokenize`: text → tokens with ids, pieces, readable text, bytes and offsets.

`--file FILE` tokenizes one text per line with a single load of the tokenizer (which is most of
the cost of a run on a large vocabulary); with `--json` it writes JSON Lines, one per text.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from explorer.api.model import Model
from explorer.api.tokens import Tokens
from explorer.cli import args as args_
from explorer.cli.common import add_model_options, load_model, print_json
from explorer.core.errors import TokenError
from explorer.core.filecheck import read_limited, read_stream
from explorer.core.limits import MAX_LINES_BYTES


def register(sub) -> None:
    p = sub.add_parser("tokenize", help="split text into tokens")
    add_model_options(p)
    p.add_argument("text", metavar="TEXT", nargs="?", type=args_.text)
    p.add_argument(
        "--file",
        metavar="FILE",
        help="tokenize each line of FILE ('-' for stdin); with --json, one JSON line per text",
    )
    p.add_argument(
        "--special", action="store_true", help="add the tokenizer's special tokens ([CLS], <s>…)"
    )
    p.set_defaults(func=run)


def _lines(name: str) -> Iterator[str]:
    """The texts of FILE, one per line (line ends removed), read as UTF-8."""
    try:
        data = (
            read_stream(sys.stdin.buffer, MAX_LINES_BYTES, "standard input")
            if name == "-"
            else read_limited(Path(name), MAX_LINES_BYTES)
        )
    except OSError as e:
        raise TokenError(f"{name}: cannot read ({e.strerror or e})") from None
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TokenError(
                f"{name}: line {number} is not valid UTF-8 (byte 0x{raw[e.start]:02X} at {e.start})"
            ) from None


def run(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.file is None):
        raise TokenError("give either TEXT or --file FILE")
    texts = list(_lines(args.file)) if args.file is not None else None  # bad file: fail early
    model = Model(load_model(args))
    if texts is None:
        tokens = model.tokenize(args.text, special=args.special)
        if args.json:
            print_json([t.as_dict() for t in tokens])
            return 0
        _print_tokens(tokens)
        print(f"{len(tokens)} tokens, {len(args.text) / max(1, len(tokens)):.2f} characters/token")
        return 0
    for number, text in enumerate(texts, start=1):
        tokens = model.tokenize(text, special=args.special) if text else Tokens()
        if args.json:
            print_json({"line": number, "text": text, "tokens": [t.as_dict() for t in tokens]})
        else:
            print(f"# line {number}: {len(tokens)} tokens")
            _print_tokens(tokens)
    return 0


def _print_tokens(tokens) -> None:
    for t in tokens:
        print(f"{t.id:>8}  {t.text:<20}  {t.bytes.hex(' '):<30}  [{t.start}:{t.end}]")
