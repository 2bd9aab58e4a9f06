"""What the plot and the heatmap share: hover reports the value index under the mouse,
double-click picks it, and a palette change restyles the view."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF


class IndexPicking:
    """Mix into a pyqtgraph GraphicsView subclass that defines the `hovered` and
    `indexClicked` signals, `_index_at(scene_pos) -> int` and `_restyle()`."""

    def _start_picking(self) -> None:
        """Call at the end of __init__: wires the mouse and applies the first style."""
        scene = self.scene()  # type: ignore[attr-defined]
        self._proxy = pg.SignalProxy(scene.sigMouseMoved, rateLimit=60, slot=self._mouse_moved)
        scene.sigMouseClicked.connect(self._mouse_clicked)
        self._ready = True
        self._restyle()

    def _index_at(self, pos: QPointF) -> int:
        raise NotImplementedError

    def _restyle(self) -> None:
        raise NotImplementedError

    def _hover(self, index: int) -> None:
        self.hovered.emit(index)  # type: ignore[attr-defined]

    def _mouse_moved(self, args: tuple) -> None:
        self._hover(self._index_at(args[0]))

    def _mouse_clicked(self, ev) -> None:
        if ev.double():
            i = self._index_at(ev.scenePos())
            if i >= 0:
                self.indexClicked.emit(i)  # type: ignore[attr-defined]

    def changeEvent(self, ev: QEvent) -> None:
        super().changeEvent(ev)  # type: ignore[misc]
        if getattr(self, "_ready", False) and ev.type() in (
            QEvent.Type.PaletteChange,
            QEvent.Type.ApplicationPaletteChange,
        ):
            self._restyle()
