"""The main window: it composes the features through a `Host` and owns what is the window's own
(opening models, the toolbar, the status bar, presentation mode, the dock layout).

A feature is installed with `install(host, state)` (see docs/architecture.md); the few links
between features (Find sends a query to the neighbours) are made here.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
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
from explorer.app.jobs import error_message
from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.resources import demo_model_dir
from explorer.ui.analysis import feature as analysis
from explorer.ui.compare import feature as compare
from explorer.ui.exports import feature as exports
from explorer.ui.host import TITLE, Host
from explorer.ui.learning import feature as learning
from explorer.ui.map import feature as map_feature
from explorer.ui.model import feature as model
from explorer.ui.neighbors import feature as neighbors
from explorer.ui.rows import feature as rows
from explorer.ui.sessions import feature as sessions
from explorer.ui.slides import feature as slides
from explorer.ui.tokens import feature as tokens
from explorer.ui.widgets.recent_paths import add_path_actions
from explorer.ui.widgets.steady_tabs import SteadyTabWidget
from explorer.ui.window.first_frame import after_first_frame
from explorer.ui.window.guide import show_guide
from explorer.ui.window.links import link_features
from explorer.ui.window.presentation import Presenter
from explorer.ui.window.status import make_status_bar

LEFT_WIDTH = 400  # px of the left dock column in the default layout
SHORT_WINDOW = 680  # px: below this height the text and neighbours docks are tabbed together
MODEL_FILTER = (
    "Models (*.safetensors *.gguf *.json);;Word vectors (*.txt *.vec *.bin *.npy);;All files (*)"
)


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
        the neighbour-index cache; `warm_up=True` loads the search kernels and compiles umap-learn
        in the background once the window has drawn its first frame."""
        super().__init__()
        self.state = state if state is not None else AppState(parent=self)
        self.jobs = self.state.jobs
        self.settings = settings if settings is not None else QSettings()
        self.persist = persist
        self._warm_up = warm_up
        self.quit_wait_ms = 5000  # launch() shortens it: os._exit follows, no join needed
        self.setWindowTitle(TITLE)
        self.setAcceptDrops(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
        )
        self.centre = SteadyTabWidget()
        self.centre.setDocumentMode(True)
        self.setCentralWidget(self.centre)
        self.host = host = Host(
            self, self.centre, self.state, self.settings, persist, open_model=self.open_path
        )
        host.add_pending(lambda: self.state.loading is not None)
        self.state.modelChanged.connect(self._model_changed)  # before the features' own slots
        self._make_file_actions()

        state = self.state
        self.model = model.install(host, state)
        self.tokens = tokens.install(host, state)
        self.neighbor_search = neighbors.install(host, state)
        self.rows_view = rows.install(host, state)
        self.maps = map_feature.install(host, state, warm_up=warm_up)
        self.learn = learning.install(host, state)
        self.analysis = analysis.install(host, state, lambda: host.show_tab(self.rows_view.viewer))
        self.compare = compare.install(host, state)
        self.sessions = sessions.install(host, state)
        self.slides = slides.install(host, state)
        link_features(self)
        self._make_view_actions()
        self._make_toolbar()
        self.exports = exports.install(host, state)  # last: it finds every table and plot
        self.status, self.job_status = make_status_bar(self.jobs)
        self.setStatusBar(self.status)

        host.titleNoteChanged.connect(self._note_title)
        state.statusMessage.connect(lambda m: self.status.showMessage(m, 8000))
        state.errorOccurred.connect(self.show_error)
        self.jobs.failed.connect(self._job_failed)

        self.resize(1280, 800)
        self._restored = persist and self._restore()
        self._shown = False
        if state.model is not None:
            self._model_changed(state.model)

    # the features' parts that the window's own code, launch, screenshots and tests reach
    @property
    def viewer(self):
        return self.rows_view.viewer

    @property
    def map_pane(self):
        return self.maps.pane

    @property
    def token_pane(self):
        return self.tokens.pane

    @property
    def search(self):
        return self.tokens.search

    @property
    def neighbors(self):
        return self.neighbor_search.controller

    @property
    def neighbors_pane(self):
        return self.neighbor_search.pane

    @property
    def error_box(self) -> QMessageBox | None:
        return self.host.error_box

    # -- building ------------------------------------------------------------------------------
    def _make_file_actions(self) -> None:
        host = self.host
        self.open_action = host.add_action(
            "file",
            "open",
            "&Open model…",
            self.open_folder_dialog,
            QKeySequence(QKeySequence.StandardKey.Open),
            "Open a model folder (Ctrl+O)",
        )
        host.add_action(
            "file",
            "open",
            "Open model &file…",
            self.open_file_dialog,
            "Ctrl+Shift+O",
            "Open a .safetensors or .gguf file, a .safetensors.index.json, or word vectors "
            "(.txt, .vec, .bin, .npy) (Ctrl+Shift+O)",
        )
        self.recent_menu = host.add_menu("file", "recent", QMenu("Open &recent", self))
        host.add_action(
            "file", "recent", "Open the &demo model", lambda: self.open_path(str(demo_model_dir()))
        )
        host.add_action("file", "quit", "&Quit", self.close, "Ctrl+Q")
        self._rebuild_recent()
        host.add_action("help", "help", "&What am I looking at?", self.show_guide, "F1")
        host.add_action("help", "help", "&About", self._about)

    def _make_view_actions(self) -> None:
        host = self.host
        host.add_action("view", "jobs", "&Cancel running jobs", self.jobs.cancel_all)
        self.presenter = Presenter(
            self,
            self.centre,
            on_restyle=self.rows_view.controller.refresh,
            refreshed=self.rows_view.controller.rowsReady,
        )
        self.presenter.activeChanged.connect(host.presentingChanged)
        self._esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self._esc.setContext(Qt.ShortcutContext.WindowShortcut)
        self._esc.activated.connect(
            lambda: self.presenter.leave() if self.presenter.active else self.jobs.cancel_all()
        )
        present = host.add_action(
            "view", "presentation", "&Presentation mode", self.presenter.toggle, "F5"
        )
        present.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        dark = host.add_action("view", "presentation", "Presentation in &dark")
        dark.setCheckable(True)
        dark.toggled.connect(self.presenter.set_dark)

    def _make_toolbar(self) -> None:
        bar = QToolBar("Main")
        bar.setObjectName("toolbar-main")
        bar.setMovable(False)
        bar.addAction(self.open_action)
        bar.addSeparator()
        bar.addWidget(QLabel(" Find "))
        bar.addWidget(self.tokens.search)
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

    def _note_title(self, note: str) -> None:
        if note and not self.title_label.text().endswith(note):
            self.title_label.setText(f"{self.title_label.text()} · {note}")

    def show_error(self, message: str) -> None:
        self.host.show_error(message)

    def _job_failed(self, lane: str, error: BaseException) -> None:
        self.status.showMessage(f"{lane}: {error_message(error)}", 15000)

    def focus_search(self) -> None:
        self.tokens.focus_search()

    def focus_text(self) -> None:
        self.tokens.focus_text()

    def show_guide(self) -> QMessageBox:
        return show_guide(self, lambda: self.host.show_tab(self.analysis.explain_view))

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
        return self.host.pending

    def _restore(self) -> bool:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        layout = self.settings.value("window/state")
        return layout is not None and bool(self.restoreState(layout))

    def default_layout(self) -> None:
        """Dock sizes that read well at 1280 × 800."""
        model_dock, text_dock = self.model.dock, self.tokens.dock
        neighbors_dock = self.neighbor_search.dock
        left = [model_dock, text_dock, neighbors_dock]
        width = min(LEFT_WIDTH, max(300, self.width() // 3))  # narrow windows: the docks give way
        if self.height() < SHORT_WINDOW:
            # three docks stacked leave each too little height: text and neighbours share one
            self.tabifyDockWidget(text_dock, neighbors_dock)
            text_dock.raise_()
            left.remove(neighbors_dock)
        self.resizeDocks([model_dock], [width], Qt.Orientation.Horizontal)
        panel = self.model.panel  # + 24 px: the dock's title bar; wrapped lines at this width
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
            if self._warm_up:
                after_first_frame(self, self.maps.controller.warm_up)

    def closeEvent(self, event) -> None:
        if self.persist:  # the normal layout, not presentation mode's
            geometry, layout = self.presenter.normal_layout() or (
                self.saveGeometry(),
                self.saveState(),
            )
            self.settings.setValue("window/geometry", geometry)
            self.settings.setValue("window/state", layout)
            self.settings.sync()
        self.jobs.shutdown(self.quit_wait_ms)
        self.state.close_tokenizer()
        super().closeEvent(event)
