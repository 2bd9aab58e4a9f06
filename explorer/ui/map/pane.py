"""The map pane: what to map, how, and the map (a PCA preview, then UMAP; the MapController in
explorer/app/controllers/map.py computes them). A click selects that token everywhere; Shift+drag
chooses points with a box, Alt+drag (or the Lasso button) with a freehand lasso.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.app.controllers.chosen import ChosenController
from explorer.app.controllers.kept import KeptController
from explorer.app.controllers.map import MapController
from explorer.app.jobs import error_message
from explorer.app.state import AppState
from explorer.core.errors import ExplorerError, TokenError
from explorer.core.map import neighborhood, projection, whole
from explorer.core.map.kept import Kept
from explorer.core.map.pipeline import MapData, MapRequest
from explorer.core.tokenizer import vocab_table
from explorer.ui.map import export as map_export
from explorer.ui.map.rings import FAR_COLOUR, KEPT_COLOUR
from explorer.ui.map.view import MapView
from explorer.ui.widgets.flow_layout import ElidedLabel, FlowLayout, labelled
from explorer.ui.widgets.job_progress import JobProgressBar
from explorer.ui.widgets.roles import OWN_EXPORTS

SOURCES = [
    ("around", "Around selection"),
    ("text", "Typed text"),
    ("list", "Pasted list"),
    ("sample", "Random sample"),
    ("whole", "Whole vocabulary"),
]
COLOURS = [
    ("similarity", "Similarity"),
    ("norm", "Norm"),
    ("cluster", "Cluster"),
    ("none", "Plain"),
]
KEPT_TIP = (
    "The selected token's 10 nearest neighbours by cosine in the original space (among\n"
    "the map's points) are ringed: green when the map places them among the token's\n"
    "10 nearest points, orange when it places them farther. Few kept: the picture\n"
    "distorts this token's neighbourhood."
)
HINT = "drag: pan · wheel: zoom · click: select · Shift+drag: box · Alt+drag: lasso"
RUNNING, CANCELLED = " — PCA preview, UMAP running…", " — PCA preview (cancelled)"
LASSO_HINT = "drag: lasso · wheel: zoom · click: select · Shift+drag: box · Lasso off: pan"


class MapPane(QWidget):
    mapShown = Signal(bool)  # a map (preview False, final True) is on screen

    def __init__(
        self,
        state: AppState,
        controller: MapController | None = None,
        parent: QWidget | None = None,
        warm_up: bool = True,
        kept: KeptController | None = None,
    ):
        super().__init__(parent)
        self.state = state
        self.controller = controller if controller is not None else MapController(state)
        self.kept = kept if kept is not None else KeptController(state)
        self.chosen_jobs = ChosenController(state)
        self._warm_up = warm_up
        self._make_request_controls()
        self._make_export_menu()
        self.setProperty(OWN_EXPORTS, True)  # the window's plot exports leave the map alone
        self._make_map_controls()
        self._lay_out()
        self._connect()
        self._source_changed()
        self._chosen_changed([])

    @property
    def data(self) -> MapData | None:  # the map on screen (None before the first one)
        return self.controller.data

    def _make_request_controls(self) -> None:
        self.source = QComboBox()
        for key, text in SOURCES:
            self.source.addItem(text, key)
        self.source.setToolTip("Which tokens to put on the map")
        self.refs = QLineEdit()
        self.refs.setPlaceholderText("tokens or ids, comma separated: cat, dog, #5, 100")
        self.n = QSpinBox()
        self.n.setRange(2, neighborhood.MAX_SAMPLE)
        self.n.setValue(neighborhood.DEFAULT_N)
        self.n.setSingleStep(100)
        self.n.setToolTip(
            f"Points on the map (around: up to {neighborhood.MAX_AROUND:,}; "
            f"sample: up to {neighborhood.MAX_SAMPLE:,})"
        )
        self.plain = QCheckBox("no special/unused")
        self.plain.setChecked(True)
        self.plain.setToolTip(
            "Random samples and the whole vocabulary leave out special tokens, placeholders "
            "such as [unused12] and rows the tokenizer does not use"
        )
        self.method = QComboBox()
        self.method.addItem("UMAP", "umap")
        self.method.addItem("PCA", "pca")
        defaults = projection.ProjectionParams()
        self.n_neighbors = QSpinBox()
        self.n_neighbors.setRange(2, projection.MAX_NEIGHBORS)
        self.n_neighbors.setValue(defaults.n_neighbors)
        self.n_neighbors.setToolTip(
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
        self.wanted_colour = self.colour.currentData()  # the user's choice
        self.map_button = QPushButton("Map")
        self.map_button.setToolTip("Project the chosen tokens (Ctrl+M)")
        self.map_button.setShortcut("Ctrl+M")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = JobProgressBar()
        self.progress.setFixedWidth(200)
        self.progress.hide()

    def _make_export_menu(self) -> None:
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        # Fusion draws the menu arrow over the text unless the button is a little wider.
        self.export_button.setMinimumWidth(self.export_button.sizeHint().width() + 14)
        menu = QMenu(self.export_button)
        for scale in map_export.SCALES:
            menu.addAction(f"PNG {scale}×…", self._exporter("png", scale))
        figure_4k = self._exporter("png", size=map_export.FIGURE_4K)
        menu.addAction("PNG 3840 × 2160 (figure)…", figure_4k)
        menu.addAction("SVG…", self._exporter("svg"))
        menu.addAction("Coordinates CSV…", self._exporter("csv"))
        menu.addAction("Coordinates JSON…", self._exporter("json"))
        self.chosen_csv = menu.addAction("Chosen tokens CSV…", self._export_chosen_dialog)
        self.chosen_csv.setToolTip("The box- or lasso-chosen tokens: id, piece, x, y")
        self.export_button.setMenu(menu)
        self.export_button.setEnabled(False)

    def _make_map_controls(self) -> None:
        self.view = MapView()
        self.title = QLabel("Select a token and press Map")
        self.title.setStyleSheet("font-weight: bold")
        self.chosen = QLabel("")
        self.kept_label = QLabel("")
        self.kept_label.setToolTip(KEPT_TIP)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the chosen tokens (id and piece per line)")
        self.remap_button = QPushButton("Map these")
        self.remap_button.setToolTip("Make a new map of the chosen tokens")
        self.lasso_button = QToolButton()
        self.lasso_button.setText("Lasso")
        self.lasso_button.setCheckable(True)
        self.lasso_button.setToolTip(
            "While down, dragging draws a freehand lasso that chooses the points inside it\n"
            "(Alt+drag does the same at any time)"
        )
        self.hint = ElidedLabel(HINT)
        self.hint.setStyleSheet("color: gray")

    def _lay_out(self) -> None:
        controls = FlowLayout()  # wraps onto a second row in a narrow window
        w: QWidget
        for label, w in (
            ("", self.source),
            ("n", self.n),
            ("", self.plain),
            ("", self.method),
            ("neighbours", self.n_neighbors),
            ("min dist", self.min_dist),
            ("colour", self.colour),
        ):
            controls.addWidget(labelled(label, w) if label else w)
        controls.add_stretch()
        for w in (self.progress, self.map_button, self.cancel_button, self.export_button):
            controls.addWidget(w)
        below = FlowLayout()
        for w in (self.lasso_button, self.chosen, self.copy_button, self.remap_button):
            below.addWidget(w)
        below.add_stretch()
        below.addWidget(self.hint)
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(4, 4, 4, 4)
        heading = FlowLayout()  # the title; the kept neighbours beside it, or below if narrow
        heading.addWidget(self.title)
        heading.add_stretch()
        heading.addWidget(self.kept_label)
        for part in (controls, self.refs, heading, self.view, below):
            if isinstance(part, QWidget):
                layout_.addWidget(part, 1 if part is self.view else 0)
            else:
                layout_.addLayout(part)

    def _connect(self) -> None:
        self.source.currentIndexChanged.connect(self._source_changed)
        self.map_button.clicked.connect(self.request_map)
        self.refs.returnPressed.connect(self.request_map)
        self.cancel_button.clicked.connect(self.cancel)
        self.colour.currentIndexChanged.connect(self._colour_chosen)
        self.view.tokenClicked.connect(lambda i: self.state.select([i]))
        self.view.tokenCtrlClicked.connect(lambda i: self.state.select([i], add=True))
        self.view.selectionMade.connect(self._chosen_changed)
        self.lasso_button.toggled.connect(self._lasso_toggled)
        self.copy_button.clicked.connect(self.copy_selection)
        self.remap_button.clicked.connect(self.map_chosen)
        self.state.selectionChanged.connect(self._follow_selection)
        self.state.selectionChanged.connect(lambda _ids: self._ask_kept())
        self.kept.keptReady.connect(self._kept_ready)
        self.chosen_jobs.textReady.connect(self._copied)
        self.chosen_jobs.saved.connect(self._saved)
        self.state.tokensChanged.connect(lambda _: self._follow_selection(self.state.selection))
        self.controller.mapReady.connect(self._show)
        self.controller.progress.connect(self._progress)
        self.controller.busyChanged.connect(self._busy)
        # the map's progress and Cancel are here: the status bar leaves the job out meanwhile
        self.progress.shows(self.state.jobs, self.controller.lane.spec)
        self.controller.failed.connect(self._failed)
        self.controller.reset.connect(self._model_changed)
        self.controller.exported.connect(lambda p: self.state.statusMessage.emit(f"Saved {p.name}"))
        self.controller.exportFailed.connect(
            lambda e: self.state.errorOccurred.emit(f"Export failed: {error_message(e)}")
        )

    # -- requests --------------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # Qt naming
        if self._warm_up:
            self.controller.warm_up()
        super().showEvent(event)
        self._ask_kept()  # asked for only while the map is shown

    def params(self) -> projection.ProjectionParams:
        return projection.ProjectionParams(
            method=self.method.currentData(),
            n_neighbors=self.n_neighbors.value(),
            min_dist=round(self.min_dist.value(), 3),
        )

    def build_request(self) -> MapRequest:
        source = self.source.currentData()
        n = self.n.value()
        if source == "around":
            if not self.state.selection:
                raise TokenError("select a token first (click a token or search for one)")
            n = min(n, neighborhood.MAX_AROUND)
            return MapRequest(source, n, self.params(), query_ids=tuple(self.state.selection))
        if source == "text":
            if not self.state.text.strip():
                raise TokenError("type some text first")
            n = min(n, neighborhood.MAX_AROUND)
            return MapRequest(source, n, self.params(), text=self.state.text)
        if source == "list":
            if not self.refs.text().strip():
                raise TokenError("paste a list of tokens or ids first")
            return MapRequest(source, n, self.params(), refs=self.refs.text())
        return MapRequest(source, n, self.params(), plain=self.plain.isChecked())

    def request_map(self) -> None:
        if self.state.model is None:
            return
        if self.source.currentData() == "whole":
            self.request_whole()
            return
        try:
            req = self.build_request()
        except ExplorerError as e:
            self.state.statusMessage.emit(str(e))
            self.title.setText(str(e))
            return
        self.controller.request(req)

    def request_whole(self, only_cached: bool = False) -> None:
        """Every row of the model, coloured by kind (a cached layout shows at once).
        `only_cached`: show it only if it is cached (choosing the source does that)."""
        if self.state.model is None:
            return
        params = whole.WholeParams(
            n_neighbors=self.n_neighbors.value(), min_dist=round(self.min_dist.value(), 3)
        )
        self.wanted_colour = "kind"
        if not only_cached:
            self.title.setText("The whole vocabulary: first picture (PCA)…")
        self.controller.request_whole(params, self.plain.isChecked(), only_cached)

    def map_chosen(self) -> None:
        """A new map of the box-chosen tokens (their old positions are kept where possible)."""
        chosen = len(self.view.selected_ids)
        if self.state.model is None or not 2 <= chosen <= neighborhood.MAX_SAMPLE:
            return
        refs = ",".join(f"#{i}" for i in self.view.selected_ids)
        self.refs.setText(refs)
        self.source.setCurrentIndex(self.source.findData("list"))
        n = len(self.view.selected_ids)
        self.controller.request(MapRequest("list", n, self.params(), refs=refs))

    def cancel(self) -> None:
        self.controller.cancel()

    # -- results ---------------------------------------------------------------------------------
    def _show(self, data: MapData) -> None:
        """A preview or a final map from the controller."""
        view = self.view
        if view.shows(data.nb.ids):  # the final layout of the preview's points
            view.set_clusters(data.clusters, data.cluster_names)
            view.set_coords(data.coords, keep_view=False, tile_index=data.quadtree)
        else:
            view.set_points(
                data.nb.ids,
                data.nb.labels,
                data.coords,
                similarity=data.nb.similarity,
                norms=data.norms,
                clusters=data.clusters,
                cluster_names=data.cluster_names,
                highlight=self._highlight_ids(data.nb.ids),
                tile_index=data.quadtree,
            )
        self._sync_colour_combo()
        stage = "" if data.final else RUNNING
        self.title.setText(data.nb.title[:1].upper() + data.nb.title[1:] + stage)
        self.export_button.setEnabled(True)
        self._chosen_changed([])
        self._ask_kept()
        # labels follow in later turns of the event loop (set_coords starts their timer)
        self.mapShown.emit(data.final)

    def _sync_colour_combo(self) -> None:
        available = self.view.available_colour_modes()
        model = cast(QStandardItemModel, self.colour.model())  # what QComboBox makes
        for row in range(self.colour.count()):
            item = model.item(row)
            item.setEnabled(self.colour.itemData(row) in available)
        want = self.wanted_colour  # kept while a map without it (a preview) is shown
        if want not in available:
            want = self.view.colour_mode
        self.colour.blockSignals(True)
        self.colour.setCurrentIndex(self.colour.findData(want))
        self.colour.blockSignals(False)
        self.view.set_colour_mode(want)

    def set_row_values(self, key: str, text: str, label: str, values, tip: str = "") -> None:
        """A colour source from another feature: one value per token id of the model (or None
        to withdraw it), listed in the colour menu as `text`, its scale labelled `label`."""
        index = self.colour.findData(key)
        if values is None:
            self.view.set_row_values(key, None)
            if index >= 0:
                self.colour.removeItem(index)
            if self.wanted_colour == key:
                self.wanted_colour = self.view.colour_mode
            return
        if index < 0:
            self.colour.insertItem(self.colour.findData("none"), text, key)
            index = self.colour.findData(key)
        self.colour.setItemText(index, text)
        self.colour.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        self.view.set_row_values(key, values, label)
        if len(self.view.ids):  # before a map, every entry stays enabled
            self._sync_colour_combo()

    def show_row_values(self, key: str) -> None:
        """Colour the map by the source `key` (now, or on the next map when none is shown)."""
        self.wanted_colour = key
        if len(self.view.ids):
            self._sync_colour_combo()
        else:
            self.colour.blockSignals(True)
            self.colour.setCurrentIndex(self.colour.findData(key))
            self.colour.blockSignals(False)

    def _colour_chosen(self) -> None:
        self.wanted_colour = self.colour.currentData()
        self.view.set_colour_mode(self.wanted_colour)

    def _failed(self, error: BaseException) -> None:
        message = error_message(error)
        self.title.setText(f"Map failed: {message}")
        self.state.statusMessage.emit(message)

    def _progress(self, text: str, fraction: float) -> None:
        self.progress.set_fraction(fraction)
        self.progress.setFormat(text or "%p%")  # elided by the bar, in its font of the moment
        self.progress.setToolTip(text)

    def _busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.progress.setVisible(busy)
        if busy:
            self.progress.setValue(0)
        elif self.title.text().endswith(RUNNING):  # cancelled between preview and layout
            self.title.setText(self.title.text().removesuffix(RUNNING) + CANCELLED)

    # -- following the rest of the window --------------------------------------------------------
    def _highlight_ids(self, shown=None) -> list[int]:  # a long paste: matched in numpy
        shown = self.view.ids if shown is None else shown
        return self.state.selection + vocab_table.text_ids_among(self.state.tokens, shown).tolist()

    def _follow_selection(self, ids) -> None:
        self.view.set_highlight(self._highlight_ids())
        if self.data is None:
            self.title.setText(self._idle_title(ids))

    def _ask_kept(self) -> None:
        """Ask for the selected token's neighbours on the map shown (one token only), while the
        pane is on screen: the scan they may need is wasted on a hidden map."""
        ids, model = self.state.selection, self.state.model
        token = ids[0] if len(ids) == 1 and self.data is not None else None
        if token is None or model is None or not self.isVisible():
            self.kept.show_for(None, None)
            self.kept_label.setText("")
            return
        name = html.escape(model.label(token))
        if not self.view.holds(token):
            self.kept.show_for(None, None)
            self.kept_label.setText(f"<span style='color: gray'>“{name}” is not on this map</span>")
            return
        self.kept.show_for(self.data, token)
        if self.kept.latest is None:
            self.kept_label.setText(f"<span style='color: gray'>neighbours of “{name}”…</span>")

    def _kept_ready(self, found: Kept | None) -> None:
        self.view.set_kept(found)
        if found is None or self.state.model is None:
            return
        model = self.state.model
        name = html.escape(model.label(found.token))
        preview = self.data is not None and not self.data.final
        self.kept_label.setText(kept_sentence(found.n_kept, len(found.rows), name, preview))
        marks = [
            f"{'kept' if k else 'far '}  {model.label(int(i))}"
            for i, k in zip(found.ids, found.kept, strict=True)
        ]
        self.kept_label.setToolTip(KEPT_TIP + "\n\n" + "\n".join(marks))

    def _idle_title(self, ids) -> str:
        model = self.state.model
        if self.source.currentData() != "around":
            return "Press Map to lay out the chosen tokens"
        if not ids or model is None:
            return "Select a token and press Map"
        return f"Press Map to lay out the {self.n.value():,} tokens around “{model.label(ids[0])}”"

    def _model_changed(self) -> None:
        self.view.clear()
        self.export_button.setEnabled(False)
        self._chosen_changed([])
        self.title.setText(self._idle_title(self.state.selection))
        if self.source.currentData() == "whole":
            self.request_whole(only_cached=True)

    def _source_changed(self) -> None:
        source = self.source.currentData()
        self.refs.setVisible(source == "list")
        self.n.setEnabled(source not in ("list", "whole"))
        self.method.setEnabled(source != "whole")
        self.plain.setVisible(source in ("sample", "whole"))
        if source == "whole" and self.data is None:  # laid out before: show it at once
            self.request_whole(only_cached=True)

    def _chosen_changed(self, ids) -> None:
        self.chosen.setText(f"{len(ids):,} chosen" if ids else "")
        self.copy_button.setEnabled(bool(ids))
        self.chosen_csv.setEnabled(bool(ids))
        self.remap_button.setEnabled(2 <= len(ids) <= neighborhood.MAX_SAMPLE)
        self.remap_button.setToolTip(
            "Make a new map of the chosen tokens"
            if len(ids) <= neighborhood.MAX_SAMPLE
            else f"A map of its own holds at most {neighborhood.MAX_SAMPLE:,} tokens: choose fewer"
        )

    def _lasso_toggled(self, on: bool) -> None:
        self.view.set_lasso_mode(on)
        self.hint.setText(LASSO_HINT if on else HINT)

    def copy_selection(self) -> None:
        """The chosen tokens to the clipboard, a line each (made off the GUI thread)."""
        self.chosen_jobs.make_text(self.view.ids, self.view.labels, self.view.chosen_rows)

    def _copied(self, text: str, n: int) -> None:
        QGuiApplication.clipboard().setText(text)
        self.state.statusMessage.emit(f"Copied {n:,} token{'s' * (n != 1)} (id and piece per line)")

    # -- export ----------------------------------------------------------------------------------
    def _exporter(self, kind: str, scale: int = 1, size=None) -> Callable[[], None]:
        """A menu action's slot for one export kind (and PNG scale, or figure size)."""
        return lambda: self._export_dialog(kind, scale, size)

    def _export_dialog(self, kind: str, scale: int = 1, size=None) -> None:
        what = {"png": "PNG image", "svg": "SVG image"}.get(kind, kind.upper())
        path, _ = QFileDialog.getSaveFileName(
            self, "Export map", f"map.{kind}", f"{what} (*.{kind})"
        )
        if path:
            try:
                self.export(path, scale, size)
            except (ExplorerError, OSError) as e:
                self.state.errorOccurred.emit(f"Export failed: {e}")

    def _export_chosen_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export chosen tokens", "chosen.csv", "CSV (*.csv)"
        )
        if path:
            self.export_chosen(path)

    def export_chosen(self, path: str | Path) -> None:
        """Write the box- or lasso-chosen tokens as CSV (id, piece, x, y), off the GUI thread."""
        view = self.view
        self.chosen_jobs.save(path, view.ids, view.labels, view.coords, view.chosen_rows)

    def _saved(self, path: str, n: int) -> None:
        self.state.statusMessage.emit(
            f"Saved {n:,} chosen token{'s' * (n != 1)} to {Path(path).name}"
        )

    def export(self, path: str | Path, scale: int = 1, size: tuple[int, int] | None = None) -> None:
        """Write the map: .png (the view at scale 1, 2 or 4, or the figure at `size`), .svg, or
        coordinates as .csv / .json."""
        if self.data is None:
            raise ExplorerError("there is no map to export")
        path = Path(path)
        figure = path.suffix.lower() == ".svg" or size is not None
        if figure and self.view.cloud.tiles is not None:  # very many points: off the GUI thread
            self.state.statusMessage.emit(f"Exporting {path.name}…")
            writer = map_export.figure_writer(
                self.view, self.data, path, size or map_export.FIGURE_SIZE
            )
            self.controller.export(writer)
            return
        map_export.write_map(self.view, self.data, path, scale, size)
        self.state.statusMessage.emit(f"Saved {path.name}")


def kept_sentence(n_kept: int, k: int, name: str, preview: bool = False) -> str:
    """Rich text: how many of a token's k nearest neighbours the map (or the PCA preview shown
    while UMAP runs) keeps near it, and what the ring colours mean."""
    what = "PCA preview" if preview else "map"
    return (
        f"{what} keeps <b>{n_kept} of {k}</b> nearest neighbours near “{name}” "
        f"(<span style='color: {KEPT_COLOUR}'>◯ kept</span> "
        f"<span style='color: {FAR_COLOUR}'>◯ far</span>)"
    )
