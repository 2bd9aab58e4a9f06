"""Rings around the selected token's exact neighbours (explorer/core/map/kept.py): green where
the map keeps a neighbour among the token's nearest points, orange where it puts it farther,
each joined to the token by a thin line of its colour, so that a neighbour the map sends far
away can be followed. A white halo under each ring and line keeps them readable over any
colour of point. Ten rings: drawing them costs nothing that grows with the map."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from explorer.core.map.kept import Kept

KEPT_COLOUR = "#1b7837"
KEPT_ON_DARK = "#5aae61"  # the same green, lighter: the dark one is 3.8:1 on black, faint
FAR_COLOUR = "#e66101"
RING_PX = 16
Z = 3  # above the points, the chosen rings and the selected token's disc


class NeighbourRings:
    def __init__(self, plot: pg.PlotItem):
        self.halo_lines = pg.PlotCurveItem(connect="pairs")
        self.lines = [pg.PlotCurveItem(connect="pairs") for _ in (KEPT_COLOUR, FAR_COLOUR)]
        self.halo = pg.ScatterPlotItem(pxMode=True, brush=None)
        self.rings = pg.ScatterPlotItem(pxMode=True, brush=None)
        for z, item in enumerate([self.halo_lines, *self.lines, self.halo, self.rings]):
            item.setZValue(Z + z * 0.01)
            plot.addItem(item)
        self.shown: Kept | None = None
        self._coords = np.zeros((0, 2))
        self.set_dark(False)

    def set_dark(self, dark: bool) -> None:
        """The halo in the background's colour, and a lighter green, in dark presentation."""
        rgb = (0, 0, 0) if dark else (255, 255, 255)
        self.halo_lines.setPen(pg.mkPen(*rgb, 200, width=3))
        self.halo.setPen(pg.mkPen(*rgb, 255, width=4))
        self.colours = (KEPT_ON_DARK if dark else KEPT_COLOUR, FAR_COLOUR)
        for colour, line in zip(self.colours, self.lines, strict=True):
            faint = QColor(colour)
            faint.setAlpha(170)
            line.setPen(pg.mkPen(faint, width=1.3))
        if self.shown is not None:
            self.show(self.shown, self._coords)

    def show(self, kept: Kept | None, coords: np.ndarray) -> None:
        """Ring `kept`'s neighbours at their places in `coords` (the map's points); None: none."""
        self.shown, self._coords = kept, coords
        if kept is None or not len(kept.rows):
            self.clear()
            return
        xy = np.asarray(coords, dtype=np.float64)[kept.rows]
        centre = np.asarray(coords, dtype=np.float64)[kept.row]
        pens = [pg.mkPen(colour, width=2.5) for colour in self.colours]
        self.halo.setData(pos=xy, size=RING_PX, brush=None)
        self.rings.setData(
            pos=xy, size=RING_PX, brush=None, pen=[pens[0] if k else pens[1] for k in kept.kept]
        )
        ends = np.repeat(centre[None, :], len(xy), axis=0)
        pairs = np.stack([ends, xy], axis=1).reshape(-1, 2)
        self.halo_lines.setData(pairs[:, 0], pairs[:, 1])
        for line, keep in zip(self.lines, (True, False), strict=True):
            mine = np.stack([ends, xy], axis=1)[kept.kept == keep].reshape(-1, 2)
            line.setData(mine[:, 0], mine[:, 1])

    def clear(self) -> None:
        self.shown = None
        for item in (self.halo, self.rings):
            item.setData(pos=np.zeros((0, 2)))
        for line in (self.halo_lines, *self.lines):
            line.setData([], [])

    def positions(self) -> np.ndarray:
        """Where the rings are drawn, in map coordinates [n, 2] (for tests)."""
        x, y = self.rings.getData()
        return np.column_stack([x, y]) if x is not None else np.zeros((0, 2))
