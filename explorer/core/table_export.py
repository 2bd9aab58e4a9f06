"""Tables as CSV text: what the window's table exports write (Qt-free, so it is tested alone)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence


def cell(value: object) -> str:
    """Numbers at full precision (not as the table rounds them), nothing for a missing value."""
    if value is None or (isinstance(value, float) and math.isinf(value) and value < 0):
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(headers))
    for row in rows:
        writer.writerow([cell(v) for v in row])
    return out.getvalue()
