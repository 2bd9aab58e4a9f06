"""The main window: model panel, tokenizer pane, embedding viewer, neighbours, status bar."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QToolBar,
    QWidget,
)

from explorer import __version__
from explorer.app import settings as recent
from explorer.app.controllers import (
    MapController,
    NeighborsController,
    RowsController,
    VocabularyController,
)
from explorer.app.controllers.learning import LearningController
from explorer.app.controllers.neighbors import Neighbors
from explorer.app.jobs import LaneSpec, error_message
from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.resources import demo_model_dir
from explorer.ui.analysis.tabs import AnalysisTabs
from explorer.ui.compare.tab import CompareTab
from explorer.ui.exports.menus import Exports
from explorer.ui.learning.learn_tab import LearnTab
from explorer.ui.learning.twin_switch import install_twin_switch
from explorer.ui.map.pane import MapPane
from explorer.ui.model import stores_menu
from explorer.ui.model.panel import ModelPanel
from explorer.ui.neighbors.pane import NeighborsPane
from explorer.ui.rows.viewer import EmbeddingViewer
from explorer.ui.sessions.menu import SessionMenus
from explorer.ui.tokens.pane import TokenPane
from explorer.ui.tokens.search import TokenSearch
from explorer.ui.widgets.layout_fence import LayoutFence
from explorer.ui.widgets.recent_paths import add_path_actions
from explorer.ui.widgets.steady_tabs import SteadyTabWidget
from explorer.ui.window.presentation import Presenter
from explorer.ui.window.status import make_status_bar

LEFT_WIDTH = 400  # px of the left dock column in the default layout
SHORT_WINDOW = 680  # px: below this height the text and neighbours docks are tabbed together
TITLE = "Embedding Explorer"
MODEL_FILTER = "Models (*.safetensors *.gguf *.json);;All files (*)"


def dropped_path(urls: list[QUrl]) -> str | None:
    """The first local file or folder among dropped URLs."""
    for url in urls:
        if url.isLocalFile() and url.toLocalFile():
            return url.toLocalFile()
    return None


class MainWindow(QMainWindow):
    def __init__(
        self,
        state: AppState | None = None,
        settings: QSettings | None = None,
        persist: bool = True,
        warm_up: bool = False,
    ):
        """`persist=False` (headless screenshots) neither reads nor writes geometry, recents or
        the neighbour-index cache; `warm_up=True` compiles umap-learn in the background now."""
        super().__init__()
        self.state = state if state is not None else AppState(parent=self)
        self.jobs = self.state.jobs
        self.settings = settings if settings is not None else QSettings()
        self.persist = persist
        self.quit_wait_ms = 5000  # launch() shortens it: os._exit follows, no join needed
        self.error_box: QMessageBox | None = None
        self.setWindowTitle(TITLE)
        self.setAcceptDrops(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
        )

        # one controller per feature; the window only wires views to them
        self.rows = RowsController(self.state)
        self.neighbors = NeighborsController(self.state, auto_index=persist)
        self.map = MapController(self.state)
        self.vocabulary = VocabularyController(self.state)

        # panes: the viewer and the map share the centre as tabs
        self.viewer = EmbeddingViewer()
        self.map_pane = MapPane(self.state, self.map, warm_up=warm_up)
        self.centre = SteadyTabWidget()
        self.centre.setDocumentMode(True)
        self.centre.addTab(self.viewer, "Embedding")
        self.centre.addTab(self.map_pane, "Map")  # its controls wrap: never wider than the tab
        self.centre.setTabToolTip(0, "Values, bits and plots of the selected tokens (Ctrl+1)")
        self.centre.setTabToolTip(1, "A UMAP map of a neighbourhood of tokens (Ctrl+2)")
        self.learning = LearningController(self.state)
        self.learn_tab = LearnTab(self.learning)
        self.centre.addTab(self.learn_tab, "Learn")
        self.centre.setTabToolTip(2, "Watch a table learn from random numbers; the random twin")
        self.setCentralWidget(self.centre)
        if warm_up:
            self.map.warm_up()
        self.model_panel = ModelPanel(self.state)
        self.token_pane = TokenPane(self.state)
        self.token_pane.editor.setAcceptDrops(False)  # a dropped file opens it as a model
        self.search = TokenSearch(self.state, self.vocabulary)
        self.search.queryEntered.connect(self.neighbors.search_text)
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        self.model_dock = self.add_dock(self.model_panel, "Model", left)
        self.text_dock = self.add_dock(self.token_pane, "Text and tokens", left)
        self.neighbors_dock: QDockWidget | None = None
        self._add_neighbors()

        self._make_actions()
        self.stores_menu = stores_menu.install(self)  # File › Models on this computer
        self.analysis = AnalysisTabs(self)  # Explain, Head, Statistics tabs and their controllers
        self.compare = CompareTab(self, after=self.demo_action)  # a second model beside this one
        self.exports = Exports(self)  # CSV / PNG / SVG from every table's and plot's menu
        self.sessions = SessionMenus(self, self.file_menu, self.quit_action)
        self._make_toolbar()
        self.status, self.job_status = make_status_bar(self.jobs)
        self.setStatusBar(self.status)

        # state and controllers → views
        self.state.modelChanged.connect(self._model_changed)
        self.twin = install_twin_switch(self)  # View › Random twin
        self.rows.rowsReady.connect(self.viewer.set_rows)
        self.rows.reading.connect(self.viewer.uncover)
        self.rows.cleared.connect(self.viewer.clear)
        self.state.levelsChanged.connect(self.viewer.set_levels)
        self.state.statusMessage.connect(lambda m: self.status.showMessage(m, 8000))
        self.state.errorOccurred.connect(self.show_error)
        self.jobs.failed.connect(self._job_failed)

        self.resize(1280, 800)
        self._restored = persist and self._restore()
        self._shown = False
        if self.state.model is not None:
            self._model_changed(self.state.model)
            self.rows.refresh()
        else:
            self.viewer.clear(
                "Open a model: File › Open, or drop a folder, a .safetensors or a .gguf file here"
            )

    # -- building ------------------------------------------------------------------------------
    def add_dock(
        self,
        widget: QWidget,
        title: str,
        area: Qt.DockWidgetArea,
        tabify_with: QDockWidget | None = None,
    ) -> QDockWidget:
        """Add a pane as a dock; other panes (e.g. a map) plug in through this."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        if tabify_with is not None:
            self.tabifyDockWidget(tabify_with, dock)
        if hasattr(self, "view_menu"):
            self.view_menu.addAction(dock.toggleViewAction())
        return dock

    def _add_neighbors(self) -> None:
        """Neighbours of the selection: searched by NeighborsController, shown by NeighborsPane."""
        pane = NeighborsPane(k=self.neighbors.k, metric=self.neighbors.metric)
        self.neighbors_pane = pane
        self.neighbors_dock = self.add_dock(  # fenced: new results re-lay out the pane only
            LayoutFence(pane), "Nearest neighbours", Qt.DockWidgetArea.LeftDockWidgetArea
        )
        pane.paramsChanged.connect(lambda: self.neighbors.set_options(*pane.options))
        pane.tokenActivated.connect(self._neighbor_clicked)
        self.neighbors.resultsReady.connect(self._neighbors_found)
        self.neighbors.cleared.connect(pane.clear)
        self.neighbors.failed.connect(lambda e: pane.show_error(error_message(e)))
        self.neighbors.slow.connect(pane.show_busy)

    def _neighbor_clicked(self, token_id: int) -> None:
        """A neighbour selects that token; Ctrl/Shift-click adds it, as on the token chips."""
        mods = QApplication.keyboardModifiers()
        add = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier))
        self.state.select([int(token_id)], add=add)

    def _neighbors_found(self, found: Neighbors) -> None:
        model = found.model
        self.neighbors_pane.show_result(
            found.result, model.label, model.is_unused, found.description, found.hidden
        )

    def _make_actions(self) -> None:
        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        self.open_action = QAction("&Open model…", self)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.setToolTip("Open a model folder (Ctrl+O)")
        self.open_action.triggered.connect(self.open_folder_dialog)
        file_menu.addAction(self.open_action)
        self.open_file_action = QAction("Open model &file…", self)
        self.open_file_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.open_file_action.setToolTip(
            "Open a .safetensors or .gguf file, or a .safetensors.index.json (Ctrl+Shift+O)"
        )
        self.open_file_action.triggered.connect(self.open_file_dialog)
        file_menu.addAction(self.open_file_action)
        self.recent_menu = QMenu("Open &recent", self)
        file_menu.addMenu(self.recent_menu)
        self.demo_action = demo = QAction("Open the &demo model", self)
        demo.triggered.connect(lambda: self.open_path(str(demo_model_dir())))
        file_menu.addAction(demo)
        file_menu.addSeparator()
        self.quit_action = quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self.file_menu = file_menu
        self._rebuild_recent()

        self.view_menu = menu.addMenu("&View")
        for dock in self.findChildren(QDockWidget):
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        for i, name in enumerate(("&Embedding", "&Map")):
            tab = QAction(name, self)
            tab.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            tab.triggered.connect(lambda _=False, i=i: self.centre.setCurrentIndex(i))
            self.view_menu.addAction(tab)
        find = QAction("&Find token", self)
        find.setShortcut(QKeySequence("Ctrl+F"))
        find.triggered.connect(self.focus_search)
        self.view_menu.addAction(find)
        text = QAction("Edit &text", self)
        text.setShortcut(QKeySequence("Ctrl+L"))
        text.triggered.connect(self.focus_text)
        self.view_menu.addAction(text)
        self.special_action = QAction("&Special tokens", self)
        self.special_action.setCheckable(True)
        self.special_action.toggled.connect(self.state.set_special)
        self.state.specialChanged.connect(self.special_action.setChecked)
        self.view_menu.addAction(self.special_action)
        cancel = QAction("&Cancel running jobs", self)
        cancel.triggered.connect(self.jobs.cancel_all)
        self.view_menu.addAction(cancel)
        self._esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self._esc.setContext(Qt.ShortcutContext.WindowShortcut)
        self.presenter: Presenter = Presenter(
            self, self.centre, on_restyle=self.rows.refresh, refreshed=self.rows.rowsReady
        )
        self._esc.activated.connect(
            lambda: self.presenter.leave() if self.presenter.active else self.jobs.cancel_all()
        )
        self.view_menu.addSeparator()
        present = self.view_menu.addAction("&Presentation mode", self.presenter.toggle)
        present.setShortcut(QKeySequence(Qt.Key.Key_F5))
        present.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        dark = self.view_menu.addAction("Presentation in &dark")
        dark.setCheckable(True)
        dark.toggled.connect(self.presenter.set_dark)

        help_menu = menu.addMenu("&Help")
        about = QAction("&About", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    def _make_toolbar(self) -> None:
        bar = QToolBar("Main")
        bar.setObjectName("toolbar-main")
        bar.setMovable(False)
        bar.addAction(self.open_action)
        bar.addSeparator()
        find = QLabel(" Find ")
        bar.addWidget(find)
        bar.addWidget(self.search)
        spacer = QWidget()
        spacer.setSizePolicy(
            spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy()
        )
        bar.addWidget(spacer)
        self.title_label = QLabel()
        self.title_label.setStyleSheet("color: palette(placeholder-text); padding-right: 6px;")
        bar.addWidget(self.title_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

    # -- opening -------------------------------------------------------------------------------
    def open_path(self, path: str, tensor: str | None = None) -> None:
        self.status.showMessage(f"Opening {path}…")
        self.state.open(path, tensor)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a model folder", self._start_dir())
        if path:
            self.open_path(path)

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a model file", self._start_dir(), MODEL_FILTER
        )
        if path:
            self.open_path(path)

    def _start_dir(self) -> str:
        items = recent.recent_models(self.settings)
        return str(Path(items[0]).parent) if items else str(Path.home())

    def _rebuild_recent(self, items: list[str] | None = None) -> None:
        """The File menu's recent models: `items` as just written, else as read from settings."""
        self.recent_menu.clear()
        items = recent.recent_models(self.settings) if items is None else items
        add_path_actions(self.recent_menu, items, self.open_path)
        if items:
            self.recent_menu.addSeparator()
            clear = QAction("Clear the list", self.recent_menu)
            clear.triggered.connect(self._clear_recent)
            self.recent_menu.addAction(clear)
        self.recent_menu.setEnabled(bool(items))

    def _clear_recent(self) -> None:
        recent.clear_recent(self.settings)
        self._rebuild_recent([])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and dropped_path(event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        path = dropped_path(event.mimeData().urls()) if event.mimeData().hasUrls() else None
        if path:
            event.acceptProposedAction()
            self.open_path(path)
        else:
            event.ignore()

    # -- state → views -------------------------------------------------------------------------
    def _model_changed(self, model: EmbeddingModel) -> None:
        self.setWindowTitle(f"{model.path.name} — {TITLE}")
        self.title_label.setText(f"{model.path.name} · {model.rows:,} × {model.dim} {model.dtype}")
        if self.persist:
            self._rebuild_recent(recent.add_recent(self.settings, model.path))
        self.viewer.set_levels(self.state.levels)

    def show_error(self, message: str) -> None:
        self.status.showMessage(message, 15000)
        if self.error_box is None:
            self.error_box = QMessageBox(QMessageBox.Icon.Warning, TITLE, "", parent=self)
            self.error_box.setWindowModality(Qt.WindowModality.WindowModal)
        self.error_box.setText(message)
        self.error_box.open()

    def _job_failed(self, lane: str, error: BaseException) -> None:
        self.status.showMessage(f"{lane}: {error_message(error)}", 15000)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def focus_text(self) -> None:
        self.text_dock.show()
        self.token_pane.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _about(self) -> None:
        QMessageBox.about(
            self,
            f"About {TITLE}",
            f"{TITLE} {__version__}\nLook inside the token-embedding matrix of a "
            "language model: tokens, raw values and bits, neighbours, maps.",
        )

    # -- settings ------------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """Anything still to do: a job running, a result undelivered, typed text not yet sent,
        map labels not yet placed."""
        return self.pending_besides()

    def pending_besides(self, *lanes: LaneSpec) -> bool:
        """The same, leaving out the jobs of these lanes."""
        return (
            self.jobs.busy_besides(*lanes)
            or self.token_pane.pending
            or self.neighbors.pending
            or self.state.loading is not None
            or self.map_pane.view.labels_pending
        )

    def _restore(self) -> bool:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        layout = self.settings.value("window/state")
        return layout is not None and bool(self.restoreState(layout))

    def default_layout(self) -> None:
        """Dock sizes that read well at 1280 × 800."""
        left = [d for d in (self.model_dock, self.text_dock, self.neighbors_dock) if d is not None]
        width = min(LEFT_WIDTH, max(300, self.width() // 3))  # narrow windows: the docks give way
        if self.height() < SHORT_WINDOW and self.neighbors_dock is not None:
            # three docks stacked leave each too little height: text and neighbours share one
            self.tabifyDockWidget(self.text_dock, self.neighbors_dock)
            self.text_dock.raise_()
            left.remove(self.neighbors_dock)
        self.resizeDocks([self.model_dock], [width], Qt.Orientation.Horizontal)
        panel = self.model_panel  # + 24 px: the dock's title bar; wrapped lines at this width
        model_h = max(panel.sizeHint().height(), panel.heightForWidth(width - 12)) + 24
        rest = max(200, self.height() - model_h - 120)
        heights = [model_h] + ([rest] if len(left) == 2 else [rest * 2 // 5, rest * 3 // 5])
        self.resizeDocks(left, heights, Qt.Orientation.Vertical)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            if not self._restored:
                self.default_layout()

    def closeEvent(self, event) -> None:
        if self.persist:
            self.settings.setValue("window/geometry", self.saveGeometry())
            self.settings.setValue("window/state", self.saveState())
            self.settings.sync()
        self.jobs.shutdown(self.quit_wait_ms)
        self.state.close_tokenizer()
        super().closeEvent(event)
