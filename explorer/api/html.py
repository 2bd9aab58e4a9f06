"""Compact HTML tables for Jupyter's `_repr_html_` (no dependencies)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

MAX_ROWS = 50  # a notebook cell shows this many rows, then says how many more there are

_STYLE = "font-family: monospace; white-space: pre"


def table(
    header: Sequence[str], rows: Iterable[Sequence[object]], total: int, caption: str = ""
) -> str:
    """An HTML table of the first MAX_ROWS `rows` (of `total`), cells escaped."""
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption style='text-align: left'>{escape(caption)}</caption>")
    parts.append("<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>")
    for n, row in enumerate(rows):
        if n == MAX_ROWS:
            break
        cells = "".join(f"<td style='{_STYLE}'>{escape(_cell(v))}</td>" for v in row)
        parts.append(f"<tr>{cells}</tr>")
    if total > MAX_ROWS:
        parts.append(f"<tr><td colspan='{len(header)}'>… {total - MAX_ROWS:,} more</td></tr>")
    parts.append("</table>")
    return "".join(parts)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1e6 else f"{value:.4e}"
    return "" if value is None else str(value)
