"""Palette-aware colours and number formatting shared by the viewer's parts."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QWidget

# Hues of a categorical palette (tab10 order); lightness adapts to the background.
_HUES = (0.58, 0.08, 0.33, 0.0, 0.76, 0.05, 0.88, 0.5, 0.17, 0.66)
DIVERGING_MAP = "CET-D1"  # blue-white-red, perceptually uniform, white at 0


def is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Base).lightnessF() < 0.5


def series_color(i: int, dark: bool) -> QColor:
    """Distinct colour for the i-th overlaid row, readable on the current background."""
    hue = _HUES[i % len(_HUES)]
    return QColor.fromHslF(hue, 0.75, 0.65 if dark else 0.38)


def muted_text(widget: QWidget) -> QColor:
    pal = widget.palette()
    text, base = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
    return QColor(
        (text.red() * 3 + base.red() * 2) // 5,
        (text.green() * 3 + base.green() * 2) // 5,
        (text.blue() * 3 + base.blue() * 2) // 5,
    )


MONO_POINT_SIZE: list[float] = []  # presentation mode puts its size here (ui/presentation.py)


def mono_font() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if MONO_POINT_SIZE:
        font.setPointSizeF(MONO_POINT_SIZE[-1])
    return font


def style_plot(item: pg.PlotItem, widget: QWidget) -> None:
    """Axes, labels and grid in the widget's palette colours (light and dark)."""
    text = widget.palette().color(QPalette.ColorRole.Text)
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(muted_text(widget)))
        axis.setTextPen(pg.mkPen(text))
        if axis.label is not None:
            axis.label.setDefaultTextColor(text)
    if item.titleLabel is not None:
        item.titleLabel.setAttr("color", text.name())
        item.titleLabel.setText(item.titleLabel.text)


def diverging_colormap() -> pg.ColorMap:
    return pg.colormap.get(DIVERGING_MAP)


def row_name(label: str, token_id: int) -> str:
    """'cat  #4937', or just '#12' when the model has no tokenizer (the label is the id)."""
    return label if label == f"#{token_id}" else f"{label}  #{token_id}"


def fmt(x: float, digits: int = 6) -> str:
    """Short readable number (6 significant digits, real minus sign)."""
    if not math.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}".replace("-", "−")


def exact_decimal(x: float) -> str:
    """The exact decimal expansion of a binary float (every float32/float64 has a finite one)."""
    if not math.isfinite(x):
        return str(x)
    return format(Decimal(float(x)), "f")


def float_repr(x: np.floating) -> str:
    """Shortest decimal string that parses back to exactly this value in its own dtype."""
    return str(x)
