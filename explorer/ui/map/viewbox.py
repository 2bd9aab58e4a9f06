"""The map's view box: drag pans, Shift+drag draws a selection box, Alt+drag a freehand lasso."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem

LASSO_STEP_PX = 3.0  # a new lasso vertex only after the mouse moved this far: few vertices


class MapViewBox(pg.ViewBox):
    """Drag pans; Shift+drag (or any drag in select mode) draws a selection box; Alt+drag (or
    any drag in lasso mode) draws a freehand lasso."""

    boxSelected = Signal(object)  # QRectF in data coordinates
    lassoSelected = Signal(object)  # np.ndarray [m, 2]: the lasso's vertices in data coordinates

    def __init__(self) -> None:
        super().__init__()
        self.select_mode = False
        self.lasso_mode = False
        self.lasso_points: list[QPointF] = []  # data coordinates, while a lasso is drawn
        self._lasso_last_px = QPointF()
        self.lasso_item = QGraphicsPathItem()
        self.lasso_item.setPen(pg.mkPen("#ff7f0e", width=1.5))  # cosmetic: 1.5 px at any zoom
        self.lasso_item.setBrush(pg.mkBrush(255, 127, 14, 40))
        self.lasso_item.setZValue(1e9)
        self.lasso_item.hide()
        self.addItem(self.lasso_item, ignoreBounds=True)

    def mouseDragEvent(self, ev, axis=None):  # Qt naming
        if ev.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(ev, axis)
            return
        alt = bool(ev.modifiers() & Qt.KeyboardModifier.AltModifier)
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if alt or (self.lasso_mode and not shift):
            ev.accept()
            self._lasso_drag(ev)
        elif shift or self.select_mode:
            ev.accept()
            if ev.isFinish():
                self.rbScaleBox.hide()
                a, b = self.mapToView(ev.buttonDownPos()), self.mapToView(ev.pos())
                self.boxSelected.emit(QRectF(a, b).normalized())
            else:
                self.updateScaleBox(ev.buttonDownPos(), ev.pos())
        else:
            super().mouseDragEvent(ev, axis)

    def _lasso_drag(self, ev) -> None:
        if ev.isStart():
            self.lasso_points = [self.mapToView(ev.buttonDownPos())]
            self._lasso_last_px = QPointF(ev.buttonDownPos())
        pos = QPointF(ev.pos())
        step = pos - self._lasso_last_px
        if ev.isFinish() or abs(step.x()) + abs(step.y()) >= LASSO_STEP_PX:
            self.lasso_points.append(self.mapToView(pos))
            self._lasso_last_px = pos
        if ev.isFinish():
            self.lasso_item.hide()
            polygon = np.array([(p.x(), p.y()) for p in self.lasso_points], dtype=np.float64)
            self.lasso_points = []
            self.lassoSelected.emit(polygon)
            return
        path = QPainterPath(self.lasso_points[0])
        for p in self.lasso_points[1:]:
            path.lineTo(p)
        path.closeSubpath()  # show the closing edge: it is part of the selection
        self.lasso_item.setPath(path)
        self.lasso_item.show()
