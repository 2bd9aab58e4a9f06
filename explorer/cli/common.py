"""Options and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from explorer.core.context import JobContext
from explorer.core.errors import ExplorerError, one_line
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.model.files import MODEL_KINDS
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir


def add_reading_options(p: argparse.ArgumentParser) -> None:
    """--tensor and -t/--tokenizer: how the model given some other way is read."""
    p.add_argument("--tensor", metavar="NAME", help="embedding tensor name (overrides detection)")
    p.add_argument(
        "-t",
        "--tokenizer",
        metavar="PATH",
        help="read the rows through this tokenizer (a tokenizer.json, a folder or a .gguf) "
        "instead of the model's own, and check that it belongs to them",
    )


def add_model_options(p: argparse.ArgumentParser, json_flag: bool = True) -> None:
    p.add_argument(
        "-m",
        "--model",
        metavar="PATH",
        help=f"{MODEL_KINDS}, or `demo` (default: the built-in demo)",
    )
    add_reading_options(p)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON to stdout")


def load_model(
    args: argparse.Namespace, tokenizer: bool = True, warn: bool = True
) -> EmbeddingModel:
    """The model of `-m` (default: the demo); with `-t`, read through that tokenizer, checked
    (`warn`: a mismatch is a line on stderr; else it is among the model's warnings only)."""
    other = getattr(args, "tokenizer", None)
    model = open_model(
        args.model or demo_model_dir(), tensor=args.tensor, tokenizer=tokenizer and not other
    )
    if other:
        with_tokenizer(model, other, warn)
    return model


def with_tokenizer(model: EmbeddingModel, path: str, warn: bool = True) -> None:
    """`model` read through the tokenizer at `path`, checked against its rows; a mismatch is one
    warning line on stderr (`warn`)."""
    from explorer.core.model.tokenizer import tokenizer_at

    model.use_tokenizer(*tokenizer_at(path, model.rows))
    verdict = model.check_tokenizer()
    if warn and verdict is not None and verdict.warning and sys.stderr is not None:
        sys.stderr.write(f"embedding-explorer: warning: {verdict.warning}\n")


def used_rows(model: EmbeddingModel) -> np.ndarray:
    """`model.used_rows` from one `get_vocab()` call. The model builds it with one short call per
    id so that a GUI thread can run in between (80 ms for 30k ids); a command has no GUI thread.
    The mask is stored where the cached property keeps it, so `model.info()` uses it."""
    if "used_rows" not in vars(model) and model.tokenizer is not None:
        from explorer.core.tokenizer.tokens import TokenizerInfo

        assert isinstance(model.tokenizer, TokenizerInfo)  # the CLI loads it in-process
        if not model.tokenizer.built:  # its pieces come without building it
            return model.used_rows
        ids = np.fromiter(model.tokenizer.tokenizer.get_vocab(with_added_tokens=True).values(), int)
        mask = np.zeros(model.rows, dtype=bool)
        mask[ids[(ids >= 0) & (ids < model.rows)]] = True
        mask.flags.writeable = False
        vars(model)["used_rows"] = mask
    return model.used_rows


class Progress(JobContext):
    """A long command's context: its progress on stderr (stdout keeps the result alone), one
    line rewritten in place on a terminal; elsewhere a line per `step` when `lines` is set
    (logs), else nothing."""

    def __init__(self, what: str, lines: bool = False, step: float = 0.05):
        super().__init__()
        self.what, self.lines, self.every = what, lines, step
        self.tty = sys.stderr.isatty()
        self._last = -1.0

    def progress(self, fraction: float, text: str = "") -> None:
        if fraction - self._last < self.every and fraction < 1.0:
            return
        self._last = fraction
        if self.tty:
            sys.stderr.write(f"\r{self.what}: {100 * fraction:5.1f} %")
        elif self.lines:
            sys.stderr.write(f"{self.what}: {100 * fraction:.0f} %\n")
        else:
            return
        sys.stderr.flush()

    def end(self, clear: bool = False) -> None:
        """End the terminal line (`clear`: erase it)."""
        if self.tty:
            width = len(self.what) + 10
            sys.stderr.write("\r" + " " * width + "\r" if clear else "\n")
            sys.stderr.flush()


def json_safe(x: Any) -> Any:
    """Non-finite floats become null so that the output stays valid JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    return x


def print_json(obj: Any) -> None:
    safe = json_safe(obj)
    text = json.dumps(safe, ensure_ascii=False, allow_nan=False)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):  # e.g. a cp1252 or ASCII pipe: escape instead
        text = json.dumps(safe, ensure_ascii=True, allow_nan=False)
    sys.stdout.write(text + "\n")


def fail(message: str, code: int = 2) -> int:
    # exactly one line, whatever the message holds, cut to MAX_ERROR_CHARS
    if sys.stderr is not None:  # None when started with 2>&-
        try:
            sys.stderr.write(f"embedding-explorer: error: {one_line(message)}\n")
        except (OSError, ValueError):
            pass
    return code


def write_png(svg: str, out: Path) -> None:
    """A figure's SVG rasterised to a PNG file (QtGui, loaded only here)."""
    from explorer.render.raster import svg_to_png

    # libpng writes "libpng error: …" straight to file descriptor 2 when a write fails (a full
    # disk); hide it for the save so that the one line below is all the user sees.
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        svg_to_png(svg, out)
    except ExplorerError:
        raise ExplorerError(f"{out}: cannot write PNG (disk full or not writable?)") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class ClosedStream:
    """Stands in for a stdout that was closed at start (`>&-`): writing is a clean error."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise ExplorerError("standard output is closed; redirect it to a file or use --out")

    def flush(self) -> None:
        pass
