"""The interactive map: one scatter item, hover, click-to-select, box and lasso selection, labels.

Everything here runs on the GUI thread and is proportional to the points on the map (the whole
vocabulary when that is mapped: then one picture of the points in view, see layers.py). Colours come
from a small palette of shared brushes (map_brushes.py); labels are a capped pool of TextItems
placed greedily where they do not overlap, recomputed (debounced) when the view range changes.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QSizePolicy, QToolTip, QVBoxLayout, QWidget

from explorer.core.map import chosen, figure, geometry, tiles
from explorer.core.map.kept import Kept
from explorer.core.map.kind_colors import kind_palette, legend_entries
from explorer.render.glyphs import drawable
from explorer.ui.map.brushes import PALETTE_STEPS, brushes, continuous_brushes
from explorer.ui.map.chosen import ChosenMarks
from explorer.ui.map.labels import LABEL_PX, LabelPool
from explorer.ui.map.layers import LAYERED_ABOVE, CloudItem
from explorer.ui.map.rings import NeighbourRings
from explorer.ui.map.viewbox import MapViewBox

CLOUD_LABELS = 60  # labels on a map of very many points, from its tiles in view
LABEL_TILE_PX = 90  # ... down to tiles about this many pixels across
FLY_SHARE = 0.06  # fly_to shows at most this share of the framed map around the token
COLOUR_MODES = ("similarity", "norm", "cluster", "kind", "none")
CONTINUOUS_LABELS = {"similarity": "cosine similarity", "norm": "L2 norm"}
NO_VALUE = (200, 200, 200)  # points a continuous source has no value for
LEGEND_TEXT = "#222222"
LEGEND_MAX_PX = 18


class MapView(QWidget):
    tokenClicked = Signal(object)  # token id (int), plain click
    tokenCtrlClicked = Signal(object)  # token id, Ctrl+click (add to selection)
    selectionMade = Signal(object)  # list[int] of ids chosen with the box or the lasso
    hovered = Signal(object)  # token id under the mouse, or None

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.ids = np.zeros(0, dtype=np.int64)
        self.labels: list[str] = []
        self.coords = np.zeros((0, 2), dtype=np.float32)
        self.values: dict[str, np.ndarray | None] = {
            "similarity": None,
            "norm": None,
            "cluster": None,
            "kind": None,
        }
        self.cluster_names: list[str] = []
        self.kinds: tuple[np.ndarray, list[str]] | None = None  # kind code of every token, names
        # further colour sources set from outside: a value per token id of the model, its label
        self.row_values: dict[str, tuple[np.ndarray, str]] = {}
        self.colour_mode = "similarity"
        self.highlight_ids: set[int] = set()
        self.selected_ids: list[int] = []
        self.chosen_rows = np.zeros(0, dtype=np.int64)  # their points' indices
        self.hover_id: int | None = None
        self.hover_text = ""
        self._order_arr = np.zeros(0, dtype=np.int64)
        self._index = Positions(self.ids)
        self._drawn = np.zeros(0, dtype=np.int8)  # per point: the font draws its label (-1: ask)
        # the last colour scale's knots, and the values (and points left out) they are of
        self._knots: tuple[tuple[np.ndarray | None, list[int]], np.ndarray] = (
            (None, []),
            np.zeros(0),
        )

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.viewbox = MapViewBox()
        self.plot = self.graphics.addPlot(row=0, col=0, viewBox=self.viewbox)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setAspectLocked(True)
        self.plot.setMenuEnabled(False)
        self.scatter = pg.ScatterPlotItem(pxMode=True, pen=None, size=7)
        self.overlay = pg.ScatterPlotItem(pxMode=True)  # highlighted points
        self.plot.addItem(self.scatter)
        self.cloud = CloudItem()  # very many points: one picture of those in view
        self.plot.addItem(self.cloud)
        self._size = 7.0
        self.plot.addItem(self.overlay)
        self.overlay.setZValue(1)
        self.rings = NeighbourRings(self.plot)
        self.chosen_marks = ChosenMarks(self.plot)
        self._home_span = 1.0  # the larger side of the framed map (fly_to zooms to a part)
        self.colour_bar = pg.ColorBarItem(
            values=(0, 1),
            colorMap=pg.colormap.get("viridis"),
            interactive=False,
            width=14,
            colorMapMenu=False,
        )
        self._bar_text = "#333333"
        self.colour_bar.axis.setWidth(None)  # ColorBarItem fixes 45 px: the label hid a tick
        self.colour_bar.axis.setTextPen(self._bar_text)
        self.graphics.addItem(self.colour_bar, row=0, col=1)
        # beside the map, not over it: a kind legend is as tall as the map at 1024 × 700
        self.legend = pg.LegendItem(
            offset=None,
            labelTextColor=LEGEND_TEXT,
            labelTextSize=legend_text_size(LABEL_PX),
            verSpacing=-6,
        )
        # as tall as its entries, at the top of the column (not spread over the map's height)
        self.legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.graphics.addItem(self.legend, row=0, col=2)
        self.graphics.ci.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignTop)
        self.legend.hide()
        self.colour_bar.hide()

        self._labels = LabelPool(self.plot)
        self._label_timer = QTimer(self, singleShot=True, interval=60)
        self._label_timer.timeout.connect(self.update_labels)
        self.viewbox.sigRangeChanged.connect(self._view_moved)
        self.viewbox.sigResized.connect(self._view_moved)
        self.viewbox.boxSelected.connect(self._box_selected)
        self.viewbox.lassoSelected.connect(self.select_lasso)
        # hover is throttled: at most 30 look-ups a second, whatever the mouse does
        self._hover_proxy = pg.SignalProxy(
            self.graphics.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved
        )
        self.graphics.scene().sigMouseClicked.connect(self._mouse_clicked)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    # -- data ------------------------------------------------------------------------------------
    def set_points(
        self,
        ids,
        labels,
        coords,
        similarity=None,
        norms=None,
        clusters=None,
        cluster_names=(),
        highlight=(),
        keep_view: bool = False,
        tile_index: tiles.Tiles | None = None,
    ) -> None:
        """Show a new map. `ids` are token ids; the other arrays are per point; `tile_index`:
        the quadtree of `coords` when the caller made it (very many points)."""
        self.ids = np.asarray(ids, dtype=np.int64)
        self.labels = list(labels)
        self._index = Positions(self.ids)
        self._drawn = np.full(len(self.labels), -1, dtype=np.int8)
        self.values = {
            "similarity": None if similarity is None else np.asarray(similarity, np.float64),
            "norm": None if norms is None else np.asarray(norms, np.float64),
            "cluster": None if clusters is None else np.asarray(clusters, np.int64),
            "kind": None if self.kinds is None else self.kinds[0][self.ids],
        }
        for name in self.row_values:
            self.values[name] = self._row_values_shown(name)
        self.cluster_names = list(cluster_names)
        self.highlight_ids = {int(i) for i in highlight}
        self.selected_ids = []
        self.chosen_rows = np.zeros(0, dtype=np.int64)
        self._labels.reset()
        self._reorder()
        if self.colour_mode != "none" and self.values.get(self.colour_mode) is None:
            self.colour_mode = next(
                m for m in COLOUR_MODES if m == "none" or self.values[m] is not None
            )
        self.set_coords(coords, keep_view=keep_view, tile_index=tile_index)

    def frame_bulk(self, share: float = 0.98) -> None:
        """Frame the central `share` of the points on each axis: far-off outliers (special
        tokens) must not squeeze the rest into a corner. Small maps, and axes without such
        outliers, show every point."""
        share = 1.0 if len(self.coords) < 200 else share
        lo, hi = np.percentile(self.coords, [50 * (1 - share), 50 * (1 + share)], axis=0)
        # every point when the farthest are not far out: none cut off at the edges
        whole_lo, whole_hi = self.coords.min(axis=0), self.coords.max(axis=0)
        near = (whole_hi - whole_lo) <= 1.5 * (hi - lo)
        lo, hi = np.where(near, whole_lo, lo), np.where(near, whole_hi, hi)
        pad = (hi - lo) * 0.06 + 1e-9
        self._home_span = float(np.max(hi - lo + 2 * pad))
        x_range, y_range = zip(lo - pad, hi + pad, strict=True)
        self.plot.getViewBox().setRange(xRange=x_range, yRange=y_range, padding=0)

    def set_coords(
        self, coords, keep_view: bool = False, tile_index: tiles.Tiles | None = None
    ) -> None:
        """New positions for the same points (the PCA preview replaced by the UMAP layout)."""
        self.coords = np.asarray(coords, dtype=np.float32).reshape(-1, 2)
        n = len(self.coords)
        self._size = 8 if n <= 1000 else 6 if n <= 5000 else 4 if n <= 20000 else 3
        if n > LAYERED_ABOVE:
            if tile_index is None:  # made here only when the caller did not (tests, sessions)
                tile_index = tiles.build(self.coords, tiles.token_priority(self.ids, self.labels))
            self.cloud.set_points(tile_index, self._size)
        else:
            self.cloud.clear()
        self._draw_points(self._size)
        self._update_overlay()
        if not keep_view and n:
            self.frame_bulk()
        self._update_legend()
        self._label_timer.start(60)

    def shows(self, ids: np.ndarray) -> bool:
        """The map shows exactly these token ids, in this order."""
        return np.array_equal(self.ids, ids)

    def set_clusters(self, clusters: np.ndarray | None, names: tuple[str, ...] = ()) -> None:
        """New cluster numbers for the points shown (applied with the next set_coords)."""
        self.values["cluster"] = None if clusters is None else np.asarray(clusters, np.int64)
        self.cluster_names = list(names)

    def set_kinds(self, codes: np.ndarray | None, names=()) -> None:
        """The kind code of every token of the model (None: unknown); recolours the map."""
        self.kinds = None if codes is None else (np.asarray(codes, np.int64), list(names))
        self.values["kind"] = None if self.kinds is None else self.kinds[0][self.ids]
        if self.colour_mode == "kind" and len(self.ids):
            self.set_colour_mode("kind")

    def set_row_values(self, name: str, values: np.ndarray | None, label: str = "") -> None:
        """A further colour source `name`: one value per token id of the model (NaN: none,
        drawn grey), shown on a continuous scale labelled `label`; None removes it. The map
        shown recolours when it is coloured by `name`."""
        if values is None:
            self.row_values.pop(name, None)
            self.values.pop(name, None)
            if self.colour_mode == name:
                self.set_colour_mode("none")
            return
        self.row_values[name] = (np.asarray(values), label)  # no copy: it may be every row
        self.values[name] = self._row_values_shown(name)
        if self.colour_mode == name and len(self.ids):
            self.set_colour_mode(name)

    def _row_values_shown(self, name: str) -> np.ndarray | None:
        """The source's values of the points shown (None when it does not cover them)."""
        v = self.row_values[name][0]
        if len(self.ids) and int(self.ids.max()) >= len(v):
            return None
        return v[self.ids]

    def set_colour_mode(self, mode: str) -> None:
        if mode not in COLOUR_MODES and mode not in self.row_values:
            raise ValueError(mode)
        self.colour_mode = mode
        if len(self.ids) > LAYERED_ABOVE:
            self.cloud.set_colours(*self.colour_codes())
        elif len(self.ids):
            self.scatter.setBrush(self._point_brushes())
        self._update_legend()

    def available_colour_modes(self) -> list[str]:
        modes = [*COLOUR_MODES[:-1], *self.row_values, "none"]
        return [m for m in modes if m == "none" or self.values.get(m) is not None]

    def _reorder(self) -> None:
        """Label priority: highlighted tokens, then the most similar (a stable order, so labels
        stay put while zooming). Very many points: their tiles name the map instead."""
        first = [self._index[i] for i in self.highlight_ids if i in self._index]
        if len(self.ids) > LAYERED_ABOVE:
            self._order_arr = np.asarray(first, dtype=np.int64)
            return
        self._order_arr = np.asarray(
            figure.label_order(len(self.ids), self.values["similarity"], first), dtype=np.int64
        )

    def label_font(self) -> QFont:
        """A copy of the labels' font."""
        return QFont(self._labels.font)

    def set_label_size(self, px: int) -> None:
        """Label type size in pixels (presentation mode); the labels are placed again."""
        self._labels.set_pixel_size(px)
        self._drawn[:] = -1
        self.legend.setLabelTextSize(legend_text_size(px))  # legible from the back row too
        self._update_legend()
        self._label_timer.start(0)

    def set_dark(self, dark: bool) -> None:
        """Labels and the colour bar's text for a dark background (presentation in dark)."""
        self._labels.set_dark(dark)
        self.rings.set_dark(dark)
        self._bar_text = "#f0f0f0" if dark else "#333333"
        self.colour_bar.axis.setTextPen(self._bar_text)
        self.legend.setLabelTextColor("#f0f0f0" if dark else LEGEND_TEXT)
        self._update_legend()

    def set_highlight(self, ids) -> None:
        highlight = {int(i) for i in ids}
        shown_before = {i for i in self.highlight_ids if i in self._index}
        self.highlight_ids = highlight
        if {i for i in highlight if i in self._index} == shown_before:
            return  # no point of this map changes (a click on a token it does not hold)
        self._reorder()
        self._update_overlay()
        self._label_timer.start(60)

    def set_selected(self, ids) -> None:
        wanted = np.asarray(list(ids), dtype=np.int64)
        rows = self._index.many(wanted)
        self.chosen_rows = rows[rows >= 0]
        self.selected_ids = wanted[rows >= 0].tolist()
        self._update_overlay()

    def selection_text(self) -> str:
        """The box- or lasso-selected tokens as lines of `id<TAB>piece` (for the clipboard)."""
        return chosen.as_lines(self.ids, self.labels, self.chosen_rows)

    def point_position(self, token_id: int) -> QPointF:
        """Where a token's point is, in GraphicsView (viewport) pixels — for tests and tooltips."""
        x, y = self.coords[self._index[int(token_id)]]
        scene = self.viewbox.mapViewToScene(QPointF(float(x), float(y)))
        return QPointF(self.graphics.mapFromScene(scene))

    # -- the selected token's neighbours, and flying to a token ----------------------------------
    def set_kept(self, kept: Kept | None) -> None:
        """Ring a token's exact neighbours (explorer/ui/map/rings.py); None, or an answer for
        other points than these, clears the rings."""
        fits = (
            kept is not None
            and kept.row < len(self.ids)
            and int(self.ids[kept.row]) == kept.token
            and bool(np.all(kept.rows < len(self.ids)))
        )
        self.rings.show(kept if fits else None, self.coords)

    def holds(self, token_id: int) -> bool:
        """The token is one of the map's points."""
        return int(token_id) in self._index

    def fly_to(self, token_id: int, share: float = FLY_SHARE) -> bool:
        """Centre the view on a token's point, zoomed in to at most `share` of the framed map
        (a closer view stays as close). False if the token is not on the map."""
        k = self._index.get(int(token_id))
        if k is None:
            return False
        (x0, x1), (y0, y1) = self.viewbox.viewRange()
        x, y = (float(v) for v in self.coords[k])
        half_w = min(x1 - x0, share * self._home_span) / 2
        half_h = half_w * (y1 - y0) / max(x1 - x0, 1e-12)
        x_range, y_range = (x - half_w, x + half_w), (y - half_h, y + half_h)
        self.viewbox.setRange(xRange=x_range, yRange=y_range, padding=0)
        return True

    # -- colours ---------------------------------------------------------------------------------
    def _colour_values(self) -> tuple[np.ndarray | None, np.ndarray]:
        """The values the points are coloured by and, for a continuous scale, its knots: the
        values at even quantiles, so that every colour step holds as many points (the query's
        own similarity, 1, is left out)."""
        mode = self.colour_mode
        v = self.values.get(mode) if mode != "none" else None
        if v is None or mode in ("cluster", "kind"):
            return v, np.linspace(0.0, 1.0, PALETTE_STEPS + 1)
        exclude = [self._index[i] for i in self.highlight_ids if i in self._index]
        exclude = exclude if mode == "similarity" else []
        (values, left_out), knots = self._knots  # the legend and the points ask for the same
        if values is not v or left_out != exclude:
            knots = figure.rank_knots(v, exclude, PALETTE_STEPS + 1)
            self._knots = ((v, exclude), knots)
        return v, knots

    def colour_codes(self) -> tuple[np.ndarray | None, np.ndarray, int]:
        """Each point's index into a small palette of RGB rows (None: all the first), and
        how many of those rows are the steps of a colour scale (0: they name categories;
        rows after the steps: points without a value)."""
        v, knots = self._colour_values()
        n = len(self.ids)
        if v is None:
            return None, np.array([figure.DEFAULT_POINT]), 0
        if self.colour_mode == "kind" and self.kinds is not None:
            return v[:n].astype(np.int64), kind_palette(self.kinds[1]), 0
        if self.colour_mode == "cluster":
            palette = np.array(figure.CATEGORICAL)
            return v[:n].astype(np.int64) % len(palette), palette, 0
        t = figure.rank_position(v, knots)
        codes = np.minimum((np.nan_to_num(t) * PALETTE_STEPS).astype(int), PALETTE_STEPS - 1)
        scale = figure.viridis(np.linspace(0, 1, PALETTE_STEPS))
        if self.colour_mode in CONTINUOUS_LABELS:
            return codes, scale, PALETTE_STEPS
        codes[np.isnan(t)] = PALETTE_STEPS  # no value: grey, after the scale's steps
        return codes, np.vstack([scale, NO_VALUE]), PALETTE_STEPS

    def _point_brushes(self) -> list[QBrush] | QBrush:
        codes, rgb, steps = self.colour_codes()
        if codes is None:
            return pg.mkBrush(*figure.DEFAULT_POINT, 210)
        # a scale's brushes are shared (one object per step, built once)
        palette = [*continuous_brushes(), *brushes(rgb[steps:])] if steps else brushes(rgb)
        return [palette[c] for c in codes.tolist()]

    def _draw_points(self, size: float) -> None:
        """Every point, coloured: one item with per-point brushes, or the cloud when many."""
        if len(self.coords) > LAYERED_ABOVE:
            self.scatter.setData(x=[], y=[])
            self.cloud.set_colours(*self.colour_codes())
            return
        self.scatter.setData(
            x=self.coords[:, 0],
            y=self.coords[:, 1],
            size=size,
            brush=self._point_brushes(),
            pen=None,
        )

    def legend_entries(self) -> tuple[list[tuple[tuple[int, ...], str]], str]:
        """(rgb, name) of each colour on the map, and what they stand for (a figure's legend;
        a colour scale gives its steps, labelled with the value where each begins)."""
        v, knots = self._colour_values()
        if v is None:
            return [], ""
        if self.colour_mode == "kind" and self.kinds is not None:
            return legend_entries(v, self.kinds[1]), "token kind"
        if self.colour_mode in ("cluster", "kind"):
            names = self.cluster_names
            cat = [figure.CATEGORICAL[c % len(figure.CATEGORICAL)] for c in range(len(names))]
            return list(zip(cat, names, strict=True)), "cluster"
        rgb = figure.viridis(np.linspace(0, 1, PALETTE_STEPS))
        steps = range(PALETTE_STEPS - 1, -1, -3)  # the top step first
        entries = [(tuple(int(c) for c in rgb[k]), f"≥ {knots[k]:.3g}") for k in steps]
        return entries, "cosine similarity" if self.colour_mode == "similarity" else "L2 norm"

    def _update_legend(self) -> None:
        v, knots = self._colour_values()
        self.legend.clear()
        self.legend.hide()
        self.colour_bar.hide()
        if v is None:
            return
        if self.colour_mode in ("cluster", "kind"):
            for rgb, name in self.legend_entries()[0]:
                sample = pg.ScatterPlotItem(brush=pg.mkBrush(*rgb), pen=None, size=9)
                self.legend.addItem(sample, drawable(name, self.font()))
            self.legend.show()
            return
        # a bar of ranks, as the points are coloured: equal steps of colour, their edges
        # labelled with the values there (the quantile knots)
        stops = np.linspace(0.0, 1.0, PALETTE_STEPS + 1)
        edges = np.repeat(stops, 2)[1:-1]
        colours = np.repeat(figure.viridis(np.linspace(0, 1, PALETTE_STEPS)), 2, axis=0)
        self.colour_bar.setColorMap(pg.ColorMap(edges, colours))
        self.colour_bar.setLevels((0.0, 1.0))
        marks = range(0, PALETTE_STEPS + 1, 4)
        ticks = [(k / PALETTE_STEPS, f"{knots[k]:.3g}") for k in marks]
        self.colour_bar.axis.setTicks([ticks, []])
        label = CONTINUOUS_LABELS.get(self.colour_mode) or self.row_values[self.colour_mode][1]
        self.colour_bar.axis.setLabel(label, color=self._bar_text)
        self.colour_bar.show()

    def _update_overlay(self) -> None:
        """Discs on highlighted points (few: the selection), marks on chosen ones (chosen.py):
        nothing per point in Python, so a lasso over a whole vocabulary stays quick."""
        self.chosen_marks.show(self.coords, self.chosen_rows, self._size)
        marked = [k for i in self.highlight_ids if (k := self._index.get(i)) is not None]
        xy = self.coords[marked] if marked else np.zeros((0, 2))
        self.overlay.setData(
            pos=xy, size=15, brush=pg.mkBrush(*figure.HIGHLIGHT), pen=pg.mkPen("w", width=2)
        )

    # -- labels ----------------------------------------------------------------------------------
    def visible_labels(self) -> list[tuple[int, str]]:
        """(token id, text) of every label shown now."""
        return self._labels.visible()

    def visible_label_rects(self) -> list[QRectF]:
        """Scene rectangles of the labels shown now."""
        return self._labels.visible_rects()

    @property
    def labels_pending(self) -> bool:
        """The view moved and the labels will be placed again shortly."""
        return self._label_timer.isActive() or self._labels.pending

    def _view_moved(self, *_args) -> None:
        """Labels follow: a map of very many points names its tiles in view at the next turn of
        the event loop (a few ms); other maps wait for the view to rest."""
        self._label_timer.start(0 if self.cloud.tiles is not None else 60)

    def update_labels(self) -> None:
        order, cap, callouts = self._order_arr, None, None  # callouts: the query's neighbours
        if self.cloud.tiles is not None or self.values["similarity"] is None:
            # no query (tile names, a random sample): only the selection may move out
            callouts = sum(1 for i in self.highlight_ids if i in self._index)
        if self.cloud.tiles is not None:  # very many points: the tiles in view name the map
            (x0, x1), (y0, y1) = self.viewbox.viewRange()
            per_px = (x1 - x0) / max(self.viewbox.width(), 1.0)
            # each tile named by a token the label font can draw (no empty boxes)
            rect = (x0, y0, x1, y1)
            reps = self.cloud.tiles.labels_in(rect, per_px, LABEL_TILE_PX, self._draws)
            order, cap = np.concatenate([self._order_arr, reps]), CLOUD_LABELS
        self._labels.update(
            self.viewbox,
            self.ids,
            self.labels,
            self.coords,
            order,
            self.highlight_ids,
            cap,
            callouts,
            self._draws,
        )
        if cap is not None:  # a few candidates: placed and shown at once
            self._labels.apply()

    def _draws(self, points: np.ndarray) -> np.ndarray:
        """Which of these points' labels the label font draws (each point asked once)."""
        todo = points[self._drawn[points] < 0]
        if len(todo):
            self._drawn[todo] = self._labels.coverage.usable(self.labels)(todo)
        return self._drawn[points] == 1

    # -- mouse -----------------------------------------------------------------------------------
    def nearest(self, scene_pos, radius_px: float = 8.0) -> int | None:
        """Index of the point under a scene position (within radius_px pixels), or None."""
        if not len(self.ids) or not self.viewbox.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.viewbox.mapSceneToView(scene_pos)
        (x0, x1), _ = self.viewbox.viewRange()
        per_px = (x1 - x0) / max(self.viewbox.sceneBoundingRect().width(), 1.0)
        rows = np.arange(len(self.coords))
        quadtree = self.cloud.tiles
        if quadtree is not None:  # only the points of the tiles about the mouse
            r = radius_px * per_px
            near = quadtree.positions_in((p.x() - r, p.y() - r, p.x() + r, p.y() + r))
            rows = quadtree.order[near]
            if not len(rows):
                return None
        d2 = (self.coords[rows, 0] - p.x()) ** 2 + (self.coords[rows, 1] - p.y()) ** 2
        k = int(np.argmin(d2))
        return int(rows[k]) if d2[k] <= (radius_px * per_px) ** 2 else None

    def describe(self, k: int) -> str:
        token_id = int(self.ids[k])
        parts = [self._labels.coverage.drawable(self.labels[k]), f"id {token_id}"]  # no boxes
        sim = self.values["similarity"]
        if sim is not None and np.isfinite(sim[k]):
            parts.append(f"cosine {sim[k]:.3f}")
        norm = self.values["norm"]
        if norm is not None:
            parts.append(f"norm {norm[k]:.3g}")
        for name, (_all, label) in self.row_values.items():
            v = self.values.get(name)
            if v is not None and np.isfinite(v[k]):
                parts.append(f"{label} {v[k]:.3g}")
        return "  ·  ".join(parts)

    def _mouse_moved(self, args) -> None:
        scene_pos = args[0]
        k = self.nearest(scene_pos)
        token_id = None if k is None else int(self.ids[k])
        if token_id == self.hover_id:
            return
        self.hover_id = token_id
        self.hover_text = "" if k is None else self.describe(k)
        if k is None:
            QToolTip.hideText()
        else:
            global_pos = self.graphics.mapToGlobal(self.graphics.mapFromScene(scene_pos))
            QToolTip.showText(global_pos, self.hover_text, self.graphics)
        self.hovered.emit(token_id)

    def _mouse_clicked(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton or ev.double():
            return
        k = self.nearest(ev.scenePos())
        if k is None:
            return
        ev.accept()
        token_id = int(self.ids[k])
        if ev.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.tokenCtrlClicked.emit(token_id)
        else:
            self.tokenClicked.emit(token_id)

    def _box_selected(self, rect: QRectF) -> None:
        x, y = self.coords[:, 0], self.coords[:, 1]
        inside = (x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom())
        self._choose(inside)

    def select_box(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """Select the points inside a data-coordinate rectangle (what Shift+drag does)."""
        self._box_selected(QRectF(QPointF(x0, y0), QPointF(x1, y1)).normalized())

    def select_lasso(self, polygon) -> None:
        """Select the points inside a polygon of data coordinates (what a lasso drag does)."""
        if len(self.ids):
            polygon = np.asarray(polygon, dtype=np.float64)
            self._choose(geometry.points_in_polygon(self.coords, polygon))

    def _choose(self, inside: np.ndarray) -> None:
        """The points where `inside` is true become the chosen ones (numpy: a lasso may hold
        most of a whole vocabulary)."""
        if not len(self.ids):
            return
        self.chosen_rows = np.flatnonzero(inside)
        self.selected_ids = self.ids[self.chosen_rows].tolist()
        self._update_overlay()
        self.selectionMade.emit(self.selected_ids)

    def set_lasso_mode(self, on: bool) -> None:
        """Plain drag draws a lasso instead of panning (Alt+drag does so in any mode)."""
        self.viewbox.lasso_mode = bool(on)

    def clear(self) -> None:
        self.set_points([], [], np.zeros((0, 2)))


class Positions:
    """Each token id's position among the map's points: what a dict of them would answer,
    from two arrays (a dict of a quarter-million ints takes a noticeable moment to build)."""

    def __init__(self, ids: np.ndarray):
        self._order = np.argsort(ids, kind="stable")
        self._sorted = np.asarray(ids)[self._order]

    def many(self, token_ids: np.ndarray) -> np.ndarray:
        """Positions of `token_ids` (-1 for those not on the map)."""
        if not len(self._sorted):
            return np.full(len(token_ids), -1, dtype=np.int64)
        k = np.minimum(np.searchsorted(self._sorted, token_ids), len(self._sorted) - 1)
        return np.where(self._sorted[k] == token_ids, self._order[k], -1).astype(np.int64)

    def get(self, token_id: int, default: int | None = None) -> int | None:
        k = int(self.many(np.array([token_id], dtype=np.int64))[0])
        return default if k < 0 else k

    def __getitem__(self, token_id: int) -> int:
        k = self.get(token_id)
        if k is None:
            raise KeyError(token_id)
        return k

    def __contains__(self, token_id: object) -> bool:
        return isinstance(token_id, (int, np.integer)) and self.get(int(token_id)) is not None


def legend_text_size(label_px: int) -> str:
    """The legend's type size beside labels of `label_px` pixels: a little smaller than them, and
    at most LEGEND_MAX_PX, so that a legend of every token kind stays shorter than the map."""
    return f"{min(round(label_px * 0.8), LEGEND_MAX_PX)}px"
