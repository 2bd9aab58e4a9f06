"""The map pane: what to map, how, and the map itself; projections run on the "projection" lane.

A request runs in two jobs on the same lane (a new request cancels either): first the points
are chosen and a PCA preview computed (well under a second), which is shown at once; then the
UMAP layout, which replaces the preview, aligned to it so that the picture settles rather than
jumps. Clicking a point selects that token everywhere; Shift+drag chooses points with a box,
Alt+drag (or drag with the Lasso button down) with a freehand lasso.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.app.jobs import cancel_flag, report_progress
from explorer.app.state import AppState
from explorer.core import figure, neighbourhood, projection
from explorer.core.errors import ExplorerError, TokenError
from explorer.core.model import EmbeddingModel
from explorer.ui import map_export
from explorer.ui.map_view import MapView

SOURCES = [
    ("around", "Around selection"),
    ("text", "Typed text"),
    ("list", "Pasted list"),
    ("sample", "Random sample"),
]
COLOURS = [
    ("similarity", "Similarity"),
    ("norm", "Norm"),
    ("cluster", "Cluster"),
    ("none", "Plain"),
]
HINT = "drag: pan · wheel: zoom · click: select · Shift+drag: box · Alt+drag: lasso"
LASSO_HINT = "drag: lasso · wheel: zoom · click: select · Shift+drag: box · Lasso off: pan"

_warm_lock = threading.Lock()
_warm_started = False


def start_warm_up() -> None:
    """Compile umap-learn once per process in a background thread (idempotent)."""
    global _warm_started
    with _warm_lock:
        if _warm_started:
            return
        _warm_started = True
    threading.Thread(target=projection.warm_up, name="umap-warm-up", daemon=True).start()


@dataclass(frozen=True)
class MapRequest:
    """An immutable snapshot of what to map, built on the GUI thread."""

    source: str
    n: int
    params: projection.ProjectionParams
    query_ids: tuple[int, ...] = ()
    text: str = ""
    refs: str = ""


@dataclass
class MapData:
    nb: neighbourhood.Neighbourhood
    vectors: np.ndarray
    norms: np.ndarray
    coords: np.ndarray
    clusters: np.ndarray | None = None
    cluster_names: tuple[str, ...] = ()
    final: bool = False


def _cancelled() -> bool:
    return cancel_flag().is_set()


def choose_and_preview(model: EmbeddingModel, req: MapRequest):
    """Job 1 (generator): the points of the map and their PCA preview."""
    yield ("Choosing tokens", 0.02)

    def on_scan(f: float) -> None:
        report_progress(0.02 + 0.5 * f, "Scanning the vocabulary")

    if req.source == "around":
        shown = ", ".join(f"“{model.label(i)}”" for i in req.query_ids[:3])
        more = "…" if len(req.query_ids) > 3 else ""
        nb = neighbourhood.around_ids(
            model,
            req.query_ids,
            req.n,
            _cancelled,
            on_scan,
            title=f"{req.n:,} tokens around {shown}{more}",
        )
    elif req.source == "text":
        nb = neighbourhood.around_text(model, req.text, req.n, _cancelled, on_scan)
    elif req.source == "list":
        nb = neighbourhood.from_list(model, req.refs)
    else:
        nb = neighbourhood.sample(model, req.n, seed=req.params.seed)
    yield ("Reading rows", 0.55)
    vectors = model.vectors(nb.ids)
    norms = np.linalg.norm(np.nan_to_num(vectors.astype(np.float64)), axis=1)
    yield ("PCA preview", 0.7)
    coords = projection.pca_2d(projection.prepare(vectors), req.params.seed)
    return MapData(nb, vectors, norms, coords)


def clusters_of(
    coords: np.ndarray, labels: list[str], seed: int
) -> tuple[np.ndarray, tuple[str, ...]]:
    """k-means of the layout (what the eye groups), each cluster named by its most central token."""
    n = len(coords)
    k = int(min(8, max(1, n // 25)))
    if k < 2:
        return np.zeros(n, dtype=np.int64), (labels[0] if labels else "all",)
    from sklearn.cluster import KMeans  # noqa: PLC0415

    km = KMeans(n_clusters=k, n_init=3, random_state=seed).fit(coords)
    names = []
    for c in range(k):
        members = np.flatnonzero(km.labels_ == c)
        d = np.linalg.norm(coords[members] - km.cluster_centers_[c], axis=1)
        names.append(f"{labels[members[np.argmin(d)]]} ({len(members)})")
    return km.labels_.astype(np.int64), tuple(names)


def layout(data: MapData, params: projection.ProjectionParams):
    """Job 2 (generator): the final layout (UMAP or PCA), aligned to the preview, plus clusters."""
    job = projection.project(
        data.vectors,
        params,
        cancelled=_cancelled,
        progress=lambda p: report_progress(p.fraction, p.message),
    )
    while True:
        try:
            step = next(job)
        except StopIteration as stop:
            coords = stop.value
            break
        yield (step.message, step.fraction)
    coords = projection.align(coords, data.nb.ids, data.coords, data.nb.ids)
    clusters, names = clusters_of(coords, data.nb.labels, params.seed)
    return MapData(data.nb, data.vectors, data.norms, coords, clusters, names, final=True)


class MapPane(QWidget):
    mapShown = Signal(bool)  # a map (preview False, final True) is on screen

    def __init__(self, state: AppState, parent: QWidget | None = None, warm_up: bool = True):
        super().__init__(parent)
        self.state = state
        self.lane = state.jobs.lane("projection")
        self.data: MapData | None = None
        self._warm_up = warm_up
        self._previous: tuple[np.ndarray, np.ndarray] | None = None  # ids, coords of the last map

        self.source = QComboBox()
        for key, text in SOURCES:
            self.source.addItem(text, key)
        self.source.setToolTip("Which tokens to put on the map")
        self.refs = QLineEdit()
        self.refs.setPlaceholderText("tokens or ids, comma separated: cat, dog, #5, 100")
        self.n = QSpinBox()
        self.n.setRange(2, neighbourhood.MAX_SAMPLE)
        self.n.setValue(neighbourhood.DEFAULT_N)
        self.n.setSingleStep(100)
        self.n.setToolTip(
            f"Points on the map (around: up to {neighbourhood.MAX_AROUND:,}; "
            f"sample: up to {neighbourhood.MAX_SAMPLE:,})"
        )
        self.method = QComboBox()
        self.method.addItem("UMAP", "umap")
        self.method.addItem("PCA", "pca")
        defaults = projection.ProjectionParams()
        self.neighbors = QSpinBox()
        self.neighbors.setRange(2, projection.MAX_NEIGHBORS)
        self.neighbors.setValue(defaults.n_neighbors)
        self.neighbors.setToolTip(
            "UMAP n_neighbors: small values keep local detail, large ones global shape"
        )
        self.min_dist = QDoubleSpinBox()
        self.min_dist.setRange(0.0, 1.0)
        self.min_dist.setSingleStep(0.05)
        self.min_dist.setValue(defaults.min_dist)
        self.min_dist.setToolTip("UMAP min_dist: how tightly points may pack")
        self.colour = QComboBox()
        for key, text in COLOURS:
            self.colour.addItem(text, key)
        self.map_button = QPushButton("Map")
        self.map_button.setToolTip("Project the chosen tokens (Ctrl+M)")
        self.map_button.setShortcut("Ctrl+M")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setMaximumWidth(220)
        self.progress.hide()
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # Fusion draws the menu arrow over the text unless the button is a little wider.
        self.export_button.setMinimumWidth(self.export_button.sizeHint().width() + 14)
        menu = QMenu(self.export_button)
        for scale in map_export.SCALES:
            menu.addAction(f"PNG {scale}×…", self._exporter("png", scale))
        menu.addAction("SVG…", self._exporter("svg"))
        menu.addAction("Coordinates CSV…", self._exporter("csv"))
        menu.addAction("Coordinates JSON…", self._exporter("json"))
        self.export_button.setMenu(menu)
        self.export_button.setEnabled(False)

        self.view = MapView()
        self.title = QLabel("Select a token and press Map")
        self.title.setStyleSheet("font-weight: bold")
        self.chosen = QLabel("")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the chosen tokens (id and piece per line)")
        self.remap_button = QPushButton("Map these")
        self.remap_button.setToolTip("Make a new map of the chosen tokens")
        w: QWidget
        for w in (self.copy_button, self.remap_button):
            w.setEnabled(False)
        self.lasso_button = QToolButton()
        self.lasso_button.setText("Lasso")
        self.lasso_button.setCheckable(True)
        self.lasso_button.setToolTip(
            "While down, dragging draws a freehand lasso that chooses the points inside it\n"
            "(Alt+drag does the same at any time)"
        )
        self.hint = QLabel(HINT)
        self.hint.setStyleSheet("color: gray")

        row1 = QHBoxLayout()
        for label, w in (
            ("", self.source),
            ("n", self.n),
            ("", self.method),
            ("neighbours", self.neighbors),
            ("min dist", self.min_dist),
            ("colour", self.colour),
        ):
            if label:
                row1.addWidget(QLabel(label))
            row1.addWidget(w)
        row1.addStretch(1)
        for w in (self.progress, self.map_button, self.cancel_button, self.export_button):
            row1.addWidget(w)
        row2 = QHBoxLayout()
        row2.addWidget(self.refs, 1)
        row3 = QHBoxLayout()
        row3.addWidget(self.lasso_button)
        row3.addWidget(self.chosen)
        row3.addWidget(self.copy_button)
        row3.addWidget(self.remap_button)
        row3.addStretch(1)
        row3.addWidget(self.hint)
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(4, 4, 4, 4)
        layout_.addLayout(row1)
        layout_.addLayout(row2)
        layout_.addWidget(self.title)
        layout_.addWidget(self.view, 1)
        layout_.addLayout(row3)

        self.source.currentIndexChanged.connect(self._source_changed)
        self.map_button.clicked.connect(self.request_map)
        self.refs.returnPressed.connect(self.request_map)
        self.cancel_button.clicked.connect(self.cancel)
        self.colour.currentIndexChanged.connect(
            lambda: self.view.set_colour_mode(self.colour.currentData())
        )
        self.view.tokenClicked.connect(lambda i: self.state.select([i]))
        self.view.tokenCtrlClicked.connect(lambda i: self.state.select([i], add=True))
        self.view.selectionMade.connect(self._chosen_changed)
        self.lasso_button.toggled.connect(self._lasso_toggled)
        self.copy_button.clicked.connect(self.copy_selection)
        self.remap_button.clicked.connect(self.map_chosen)
        self.state.selectionChanged.connect(self._follow_selection)
        self.state.tokensChanged.connect(lambda _: self._follow_selection(self.state.selection))
        self.state.modelChanged.connect(self._model_changed)
        self._source_changed()

    # -- requests --------------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # noqa: N802 - Qt naming
        if self._warm_up:
            start_warm_up()
        super().showEvent(event)

    def params(self) -> projection.ProjectionParams:
        return projection.ProjectionParams(
            method=self.method.currentData(),
            n_neighbors=self.neighbors.value(),
            min_dist=round(self.min_dist.value(), 3),
        )

    def build_request(self) -> MapRequest:
        source = self.source.currentData()
        n = self.n.value()
        if source == "around":
            if not self.state.selection:
                raise TokenError("select a token first (click a token or search for one)")
            n = min(n, neighbourhood.MAX_AROUND)
            return MapRequest(source, n, self.params(), query_ids=tuple(self.state.selection))
        if source == "text":
            if not self.state.text.strip():
                raise TokenError("type some text first")
            return MapRequest(
                source, min(n, neighbourhood.MAX_AROUND), self.params(), text=self.state.text
            )
        if source == "list":
            if not self.refs.text().strip():
                raise TokenError("paste a list of tokens or ids first")
            return MapRequest(source, n, self.params(), refs=self.refs.text())
        return MapRequest(source, n, self.params())

    def request_map(self) -> None:
        model = self.state.model
        if model is None:
            return
        try:
            req = self.build_request()
        except ExplorerError as e:
            self.state.statusMessage.emit(str(e))
            self.title.setText(str(e))
            return
        self.submit(model, req)

    def submit(self, model: EmbeddingModel, req: MapRequest) -> None:
        self._busy(True)
        self.lane.submit(
            choose_and_preview,
            model,
            req,
            label="Map: choosing tokens",
            on_result=lambda data: self._preview_ready(data, req),
            on_error=self._failed,
            on_progress=self._progress,
        )

    def map_chosen(self) -> None:
        """A new map of the box-chosen tokens (their old positions are kept where possible)."""
        if self.state.model is None or not self.view.selected_ids:
            return
        refs = ",".join(f"#{i}" for i in self.view.selected_ids)
        self.refs.setText(refs)
        self.source.setCurrentIndex(self.source.findData("list"))
        self.submit(
            self.state.model,
            MapRequest("list", len(self.view.selected_ids), self.params(), refs=refs),
        )

    def cancel(self) -> None:
        self.lane.cancel()
        self._busy(False)
        self.state.statusMessage.emit("Map cancelled")

    # -- results ---------------------------------------------------------------------------------
    def _preview_ready(self, data: MapData, req: MapRequest) -> None:
        if self._previous is not None:  # keep a re-mapped neighbourhood recognisable
            data.coords = projection.align(
                data.coords, data.nb.ids, self._previous[1], self._previous[0]
            )
        self._show(data, final=req.params.method == "pca")
        self.view.update_labels()  # now, while no worker competes for the GIL
        self.view._label_timer.stop()
        if req.params.method == "pca":
            self._busy(False)
            return
        self.lane.submit(
            layout,
            data,
            req.params,
            label=f"Map: UMAP of {len(data.nb):,} tokens",
            on_result=lambda d: self._final_ready(d),
            on_error=self._failed,
            on_progress=self._progress,
        )

    def _final_ready(self, data: MapData) -> None:
        self._show(data, final=True)
        self._busy(False)

    def _show(self, data: MapData, final: bool) -> None:
        same_points = self.data is not None and np.array_equal(self.data.nb.ids, data.nb.ids)
        if final and data.clusters is None:
            data.clusters, data.cluster_names = clusters_of(data.coords, data.nb.labels, 0)
        data.final = final
        self.data = data
        highlight = self._highlight_ids()
        if same_points:
            self.view.values["cluster"] = data.clusters
            self.view.cluster_names = list(data.cluster_names)
            self.view.set_coords(data.coords, keep_view=False)
        else:
            self.view.set_points(
                data.nb.ids,
                data.nb.labels,
                data.coords,
                similarity=data.nb.similarity,
                norms=data.norms,
                clusters=data.clusters,
                cluster_names=data.cluster_names,
                highlight=highlight,
            )
        self._sync_colour_combo()
        self._previous = (data.nb.ids, data.coords)
        stage = "" if final else " — PCA preview, UMAP running…"
        self.title.setText(data.nb.title[:1].upper() + data.nb.title[1:] + stage)
        self.export_button.setEnabled(True)
        self._chosen_changed([])
        self.mapShown.emit(final)

    def _sync_colour_combo(self) -> None:
        available = self.view.available_colour_modes()
        model = cast(QStandardItemModel, self.colour.model())  # what QComboBox makes
        for row in range(self.colour.count()):
            item = model.item(row)
            item.setEnabled(self.colour.itemData(row) in available)
        want = self.colour.currentData()
        if want not in available:
            want = self.view.colour_mode
        self.colour.blockSignals(True)
        self.colour.setCurrentIndex(self.colour.findData(want))
        self.colour.blockSignals(False)
        self.view.set_colour_mode(want)

    def _failed(self, message: str) -> None:
        self._busy(False)
        self.title.setText(f"Map failed: {message}")
        self.state.statusMessage.emit(message)

    def _progress(self, text: str, fraction: float) -> None:
        self.progress.setValue(int(max(0.0, min(1.0, fraction)) * 1000))
        self.progress.setFormat(text or "%p%")

    def _busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.progress.setVisible(busy)
        if busy:
            self.progress.setValue(0)

    # -- following the rest of the window --------------------------------------------------------
    def _highlight_ids(self) -> list[int]:
        ids = list(self.state.selection)
        ids += [t.id for t in self.state.tokens if not t.special]
        return ids

    def _follow_selection(self, ids) -> None:
        self.view.set_highlight(self._highlight_ids())
        if self.data is None:
            self.title.setText(self._idle_title(ids))

    def _idle_title(self, ids) -> str:
        model = self.state.model
        if self.source.currentData() != "around":
            return "Press Map to lay out the chosen tokens"
        if not ids or model is None:
            return "Select a token and press Map"
        return f"Press Map to lay out the {self.n.value():,} tokens around “{model.label(ids[0])}”"

    def _model_changed(self, _model) -> None:
        self._busy(False)  # the state cancelled the projection lane
        self.data = None
        self._previous = None
        self.view.clear()
        self.export_button.setEnabled(False)
        self._chosen_changed([])
        self.title.setText(self._idle_title(self.state.selection))

    def _source_changed(self) -> None:
        source = self.source.currentData()
        self.refs.setVisible(source == "list")
        self.n.setEnabled(source != "list")

    def _chosen_changed(self, ids) -> None:
        self.chosen.setText(f"{len(ids):,} chosen" if ids else "")
        self.copy_button.setEnabled(bool(ids))
        self.remap_button.setEnabled(len(ids) >= 2)

    def _lasso_toggled(self, on: bool) -> None:
        self.view.set_lasso_mode(on)
        self.hint.setText(LASSO_HINT if on else HINT)

    def copy_selection(self) -> str:
        text = self.view.selection_text()
        QGuiApplication.clipboard().setText(text)
        return text

    # -- export ----------------------------------------------------------------------------------
    def _exporter(self, kind: str, scale: int = 1) -> Callable[[], None]:
        """A menu action's slot for one export kind (and PNG scale)."""
        return lambda: self._export_dialog(kind, scale)

    def _export_dialog(self, kind: str, scale: int = 1) -> None:
        filters = {
            "png": "PNG image (*.png)",
            "svg": "SVG image (*.svg)",
            "csv": "CSV (*.csv)",
            "json": "JSON (*.json)",
        }
        path, _ = QFileDialog.getSaveFileName(self, "Export map", f"map.{kind}", filters[kind])
        if path:
            try:
                self.export(path, scale)
            except (ExplorerError, OSError) as e:
                self.state.errorOccurred.emit(f"Export failed: {e}")

    def export(self, path: str | Path, scale: int = 1) -> None:
        """Write the map: .png (at scale 1, 2 or 4), .svg, or coordinates as .csv / .json."""
        if self.data is None:
            raise ExplorerError("there is no map to export")
        path = Path(path)
        kind = path.suffix.lower()
        d = self.data
        if kind == ".png":
            map_export.grab_png(self.view, path, scale)
        elif kind == ".svg":
            map_export.grab_svg(self.view, path, title=d.nb.title)
        elif kind == ".csv":
            path.write_text(
                figure.coordinates_csv(d.nb.ids, d.nb.labels, d.coords), encoding="utf-8"
            )
        elif kind == ".json":
            path.write_text(
                figure.coordinates_json(
                    d.nb.ids, d.nb.labels, d.coords, title=d.nb.title, final=d.final
                ),
                encoding="utf-8",
            )
        else:
            raise ExplorerError(f"{path.name}: export as .png, .svg, .csv or .json")
        self.state.statusMessage.emit(f"Saved {path.name}")
