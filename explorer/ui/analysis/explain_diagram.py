"""The picture of onehot(t) · E = E[t]: the one-hot vector as a long strip with its single 1,
E as a tall strip with row t lit, and the product and the looked-up row as two colour bars.

Painted with QPainter from a handful of numbers and two rows of d_model values: nothing here
grows with the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.ui.rows.style import DIVERGING_MAP, is_dark

MARGIN = 16
GOOD = QColor("#15803d")
GOOD_DARK = QColor("#4ade80")
BAD = QColor("#b91c1c")


@dataclass
class DiagramData:
    """What the diagram shows; `product`/`lookup` are None until the product is computed."""

    token_id: int
    text: str
    rows: int
    dim: int
    fraction: float = 0.0  # share of E multiplied so far
    product: np.ndarray | None = None
    lookup: np.ndarray | None = None
    identical: int | None = None


def colour_bar(values: np.ndarray, limit: float) -> QImage:
    """A 1 × d image of the values on the diverging map (white at 0)."""
    lut = pg.colormap.get(DIVERGING_MAP).getLookupTable(nPts=256, alpha=False)
    v = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0)
    idx = np.clip(((v / limit) + 1) * 127.5, 0, 255).astype(np.intp) if limit > 0 else v * 0
    rgb = np.ascontiguousarray(lut[idx.astype(np.intp)].astype(np.uint8)[None, :, :])
    image = QImage(rgb.data, rgb.shape[1], 1, rgb.shape[1] * 3, QImage.Format.Format_RGB888)
    return image.copy()  # owns its pixels once `rgb` is gone


class ExplainDiagram(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.data: DiagramData | None = None
        self.hint = ""
        self._bars: tuple[QImage, QImage] | None = None
        self.setMinimumHeight(300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def show_data(self, data: DiagramData | None, hint: str = "") -> None:
        self.data, self.hint = data, hint
        self._bars = None
        if data is not None and data.product is not None and data.lookup is not None:
            finite = np.abs(data.lookup[np.isfinite(data.lookup)])
            limit = float(finite.max()) if finite.size else 1.0
            self._bars = (colour_bar(data.product, limit), colour_bar(data.lookup, limit))
        self.update()

    def set_fraction(self, fraction: float) -> None:
        if self.data is not None:
            self.data.fraction = max(0.0, min(1.0, fraction))
            self.update()

    # -- painting ------------------------------------------------------------------------------
    def _font(self, px: float, bold: bool = False) -> QFont:
        f = QFont(self.font())
        f.setPixelSize(max(11, int(px)))
        f.setBold(bold)
        return f

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        if self.data is None:
            p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            p.setFont(self._font(self.height() / 18))
            p.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.hint
            )
            return
        fs = max(12.0, min(self.height() / 20, self.width() / 55, 22.0))
        text = pal.color(QPalette.ColorRole.Text)
        accent = pal.color(QPalette.ColorRole.Highlight)
        muted = pal.color(QPalette.ColorRole.PlaceholderText)
        left, right = MARGIN, self.width() - MARGIN
        y = self._one_hot(p, fs, left, right, float(MARGIN), text, accent, muted)
        self._matrix_and_rows(p, fs, left, right, y + fs, text, accent, muted)

    def _one_hot(self, p, fs, left, right, top, text, accent, muted) -> float:
        d = self.data
        assert d is not None
        p.setFont(self._font(fs, bold=True))
        p.setPen(text)
        p.drawText(QPointF(left, top + fs), "one-hot(t)")
        p.setFont(self._font(fs * 0.8))
        p.setPen(muted)
        p.drawText(
            QPointF(left + fs * 7.5, top + fs),
            f"{d.rows:,} numbers: a single 1 at position {d.token_id:,}, {d.rows - 1:,} zeros",
        )
        strip = QRectF(left, top + fs * 3.0, right - left, fs * 0.9)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(pal_mid(self))
        p.drawRect(strip)
        x = strip.left() + strip.width() * (d.token_id + 0.5) / max(d.rows, 1)
        p.setBrush(accent)
        p.drawRect(QRectF(x - 2, strip.top() - fs * 0.35, 4, strip.height() + fs * 0.7))
        p.setPen(text)
        p.setFont(self._font(fs * 0.8, bold=True))
        one = QRectF(x - 30, strip.top() - fs * 1.45, 60, fs)
        p.drawText(one, Qt.AlignmentFlag.AlignCenter, "1")
        p.setFont(self._font(fs * 0.7))
        p.setPen(muted)
        below = strip.bottom() + fs * 0.95
        p.drawText(QPointF(strip.left(), below), "0")
        last = f"{d.rows - 1:,}"
        p.drawText(QPointF(strip.right() - p.fontMetrics().horizontalAdvance(last), below), last)
        return below

    def _matrix_and_rows(self, p, fs, left, right, top, text, accent, muted) -> None:
        d = self.data
        assert d is not None
        bottom = self.height() - MARGIN
        # E: a tall strip, as tall as the space allows (the product is spelled out beside it)
        e_w = max(fs * 2.4, min(90.0, (right - left) * 0.07))
        e_x = left + fs * 2.0
        e_top, e_bottom = top + fs * 1.6, bottom - fs * 1.4
        strip = QRectF(e_x, e_top, e_w, max(20.0, e_bottom - e_top))
        p.setFont(self._font(fs, bold=True))
        p.setPen(text)
        p.drawText(QPointF(e_x, top + fs * 1.2), "E")
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(pal_mid(self))
        p.drawRect(strip)
        if 0 < d.fraction < 1 and d.product is None:  # the rows multiplied so far
            done = QColor(accent)
            done.setAlphaF(0.25)
            p.setBrush(done)
            p.drawRect(
                QRectF(strip.left(), strip.top(), strip.width(), strip.height() * d.fraction)
            )
        row_y = strip.top() + strip.height() * (d.token_id + 0.5) / max(d.rows, 1)
        p.setBrush(accent)
        p.drawRect(QRectF(strip.left() - 4, row_y - 2, strip.width() + 8, 4))
        p.setFont(self._font(fs * 0.7))
        p.setPen(muted)
        p.drawText(QPointF(e_x, strip.bottom() + fs * 0.95), f"{d.rows:,} rows × {d.dim:,}")
        self._result_rows(p, fs, strip.right() + fs * 2.5, right, top, bottom, row_y, text, accent)

    def _result_rows(self, p, fs, x0, right, top, bottom, row_y, text, accent) -> None:
        d = self.data
        assert d is not None
        width = max(40.0, right - x0)
        bar_h = max(fs * 1.4, min(56.0, (bottom - top) / 8))
        gap = fs * 2.6
        mid = (top + bottom) / 2
        y_prod = mid - bar_h - gap / 2 - fs
        y_look = mid + gap / 2 - fs * 0.2
        rows = (
            (y_prod, "= onehot(t) · E", f"multiplied out over all {d.rows:,} rows", 0),
            (y_look, "E[t]", f"row {d.token_id:,} read directly", 1),
        )
        for y, title, sub, which in rows:
            p.setPen(text)
            p.setFont(self._font(fs, bold=True))
            p.drawText(QPointF(x0, y), title)
            title_w = p.fontMetrics().horizontalAdvance(title)
            p.setFont(self._font(fs * 0.75))
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(QPointF(x0 + title_w + fs, y), sub)
            bar = QRectF(x0, y + fs * 0.4, width, bar_h)
            if self._bars is not None:
                p.drawImage(bar, self._bars[which])
                p.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRect(bar)
            else:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(pal_mid(self))
                p.drawRect(bar)
                p.setPen(text)
                p.setFont(self._font(fs * 0.8))
                busy = f"computing… {d.fraction:.0%}" if which == 0 else "waiting for the product"
                p.drawText(bar, Qt.AlignmentFlag.AlignCenter, busy)
            if which == 1:  # the lookup: an arrow from row t of E
                pen = QPen(accent, 2, Qt.PenStyle.DashLine)
                p.setPen(pen)
                p.drawLine(QPointF(x0 - fs * 2.2, row_y), QPointF(x0 - 6, bar.center().y()))
        self._verdict(p, fs, x0, y_look + fs * 0.4 + bar_h + fs * 2.0)

    def verdict(self) -> str:
        """The equality as counted: "✓ identical: 384 of 384 values" ("" before the result)."""
        d = self.data
        if d is None or d.identical is None:
            return ""
        mark = "✓" if d.identical == d.dim else "✗"
        return f"{mark} identical: {d.identical:,} of {d.dim:,} values"

    def _verdict(self, p, fs, x0, y) -> None:
        d = self.data
        assert d is not None
        if d.identical is None:
            return
        good = GOOD_DARK if is_dark(self) else GOOD
        p.setPen(good if d.identical == d.dim else BAD)
        p.setFont(self._font(fs * 1.25, bold=True))
        p.drawText(QPointF(x0, y), self.verdict())


def pal_mid(widget: QWidget) -> QColor:
    return (
        widget.palette()
        .color(QPalette.ColorRole.Midlight if is_dark(widget) else QPalette.ColorRole.Mid)
        .lighter(115)
    )
