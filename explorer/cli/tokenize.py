"""`tokenize`: text → tokens with ids, pieces, readable text, bytes and offsets."""

from __future__ import annotations

import argparse

from explorer.cli import args as args_
from explorer.cli.common import add_model_options, load_model, print_json
from explorer.core.errors import TokenError


def register(sub) -> None:
    p = sub.add_parser("tokenize", help="split text into tokens")
    add_model_options(p)
    p.add_argument("text", metavar="TEXT", type=args_.text)
    p.add_argument(
        "--special", action="store_true", help="add the tokenizer's special tokens ([CLS], <s>…)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args)
    if model.tokenizer is None:
        raise TokenError(
            f"{model.path}: no tokenizer.json beside the model, so text cannot be tokenized"
        )
    tokens = model.tokenizer.encode(args.text, special=args.special)
    if args.json:
        print_json([t.as_dict() for t in tokens])
        return 0
    for t in tokens:
        print(f"{t.id:>8}  {t.text:<20}  {t.bytes.hex(' '):<30}  [{t.start}:{t.end}]")
    print(f"{len(tokens)} tokens, {len(args.text) / max(1, len(tokens)):.2f} characters/token")
    return 0
