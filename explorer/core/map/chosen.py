"""The box- or lasso-chosen points of a map as text: lines for the clipboard, or CSV. A lasso
over a whole vocabulary chooses a quarter of a million points, so the text is made off the
GUI thread (explorer/app/controllers/chosen.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from explorer.core.map import figure


def as_lines(ids: np.ndarray, labels: Sequence[str], rows: np.ndarray) -> str:
    """`id<TAB>piece` per chosen point (`rows`: their indices among the map's points)."""
    pairs = zip(ids[rows].tolist(), rows.tolist(), strict=True)
    return "".join(f"{i}\t{labels[k]}\n" for i, k in pairs)


def write_csv(
    path: Path, ids: np.ndarray, labels: Sequence[str], coords: np.ndarray, rows: np.ndarray
) -> int:
    """`id,piece,x,y` of the chosen points to `path`; how many were written."""
    pieces = [labels[k] for k in rows.tolist()]
    text = figure.coordinates_csv(ids[rows], pieces, coords[rows])
    Path(path).write_text(text, encoding="utf-8")
    return len(rows)
