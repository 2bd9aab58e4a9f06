"""The map's shared brushes: a small palette of QBrush objects that every point indexes into
(one brush object per point is 25× slower to build)."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QBrush, QColor

from explorer.core.map import figure

PALETTE_STEPS = 16  # steps of a continuous colour scale


def brushes(rgb: np.ndarray, alpha: int = 220) -> list[QBrush]:
    return [QBrush(QColor(int(r), int(g), int(b), alpha)) for r, g, b in rgb]


_CONTINUOUS: list[QBrush] | None = None  # built lazily: QBrush needs a QGuiApplication


def continuous_brushes() -> list[QBrush]:
    global _CONTINUOUS
    if _CONTINUOUS is None:
        _CONTINUOUS = brushes(figure.viridis(np.linspace(0, 1, PALETTE_STEPS)))
    return _CONTINUOUS
