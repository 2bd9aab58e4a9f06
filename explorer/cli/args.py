"""Argument validation for every subcommand, in one place: argparse `type=` callables built on
the Qt-free checks of `explorer.core.limits` (the GUI calls those checks directly).

A bad value becomes a one-line usage error with exit code 2, before any model is opened.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from explorer.core import limits
from explorer.core.errors import ExplorerError

MAX_ID = 2**63 - 1


def _wrap(check: Callable[[str], object]) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return check(text)
        except ExplorerError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = check.__name__  # argparse names the type in some messages
    return convert


def _whole(text: str) -> int:
    """ASCII digits with an optional minus sign: int() would also take '١٢', '1_0' or ' 7'."""
    body = text[1:] if text.startswith("-") else text
    value = limits.parse_id(body)
    if value is None:
        raise ExplorerError(f"invalid int value: {limits.shown_arg(text)}")
    return -value if text.startswith("-") else value


def int_range(low: int, high: int, name: str) -> Callable[[str], object]:
    """A whole number from low to high (ASCII digits)."""

    def whole_number(text: str) -> int:
        value = _whole(text)
        if not low <= value <= high:
            raise ExplorerError(f"{name} must be between {low:,} and {high:,}, not {value}")
        return value

    return _wrap(whole_number)


def float_range(low: float, high: float, name: str) -> Callable[[str], object]:
    """A finite number from low to high."""

    def number(text: str) -> float:
        try:
            value = float(text) if text.isascii() and len(text) <= 40 else float("nan")
        except ValueError:
            value = float("nan")
        if not (math.isfinite(value) and low <= value <= high):
            raise ExplorerError(
                f"{name} must be between {low:g} and {high:g}, not {limits.shown_arg(text)}"
            )
        return value

    return _wrap(number)


def _text(value: str) -> str:
    return limits.check_text(value, "the value")


text = _wrap(_text)  # at most MAX_TEXT_CHARS characters, non-empty, valid UTF-8


def _token_id(text: str) -> int:
    value = _whole(text)
    if not 0 <= value <= MAX_ID:
        raise ExplorerError(f"token id {value} is out of range")
    return value


token_id = _wrap(_token_id)  # a row number: ASCII digits only; the rows are checked later


def write_text_file(path: str | Path, content: str) -> None:
    """Encode first, then write: a failure never leaves an empty or half-written file behind.

    Text from file names that are not valid UTF-8 carries surrogate escapes; they become U+FFFD.
    """
    data = limits.display_text(content).encode("utf-8")
    try:
        Path(path).write_bytes(data)
    except OSError as e:
        raise ExplorerError(f"{path}: cannot write ({e.strerror or e})") from None


def _pixel_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ExplorerError(
            f"size {limits.shown_arg(text)}: expected WIDTHxHEIGHT, e.g. 1280x800"
        ) from None
    if not (320 <= w <= 8000 and 240 <= h <= 8000):
        raise ExplorerError(f"size {text}: width 320–8000 and height 240–8000 pixels")
    return w, h


pixel_size = _wrap(_pixel_size)  # WIDTHxHEIGHT in pixels: a window's or a figure's size


def _type_names(text: str) -> list[str]:
    names = [n.strip().upper() for n in text.split(",")]
    if not all(n and n.replace("_", "").isalnum() and n.isascii() for n in names):
        raise ExplorerError(
            f"types {limits.shown_arg(text)}: expected names separated by commas, e.g. Q8_0,Q4_0"
        )
    return list(dict.fromkeys(names))


type_names = _wrap(_type_names)  # GGML type names separated by commas: Q8_0,Q5_1,Q4_0
