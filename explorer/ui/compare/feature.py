"""Two models side by side: the Compare tab, File › Compare with…, the controller active only
while the tab is shown, and the second model in sessions. The tab's second page, Precision,
shows what quantisation does to the open model (simulated, or against the second model)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QTabWidget

from explorer.app.controllers.compare import CompareController, Pair
from explorer.app.controllers.quant import QuantController
from explorer.app.state import AppState
from explorer.ui.compare.precision import PrecisionView
from explorer.ui.compare.view import CompareView
from explorer.ui.host import Host

OTHER_FILTER = "Models (*.safetensors *.gguf *.json);;All files (*)"


def wire(c: CompareController, v: CompareView) -> None:
    c.pairStarted.connect(v.show_started)
    c.pairReady.connect(v.show_pair)
    c.pairCleared.connect(v.clear)
    c.progress.connect(v.set_progress)
    c.busyChanged.connect(v.set_busy)
    c.tokenReady.connect(v.show_token)
    c.tokenCleared.connect(v.clear_token)
    c.tokenFailed.connect(v.show_token_error)
    c.overlapReady.connect(v.show_overlap)
    c.cleared.connect(v.clear)
    c.failed.connect(v.show_error)
    v.cancelRequested.connect(c.cancel)
    v.closeRequested.connect(lambda: c.set_other(None))
    v.kChanged.connect(c.set_k)
    v.pointsChanged.connect(c.set_points)
    # the page shows its jobs' progress with their Cancel: not in the status bar as well
    v.bar.shows(c.state.jobs, *(lane.spec for lane in c.lanes))


def wire_precision(q: QuantController, p: PrecisionView) -> None:
    q.started.connect(p.show_started)
    q.resultReady.connect(p.show_result)
    q.cleared.connect(p.clear)
    q.failed.connect(p.show_error)
    q.progress.connect(p.set_progress)
    q.busyChanged.connect(p.set_busy)
    p.simulateRequested.connect(q.simulate)
    p.cancelRequested.connect(q.cancel)
    p.typeChosen.connect(q.set_type)
    q.rowReady.connect(p.show_row)
    p.bar.shows(q.state.jobs, q.lane.spec)  # (as for the two models' page)


class Compare:
    """The comparison controller and view of one window."""

    def __init__(self, host: Host, state: AppState):
        self.host = host
        self.controller = CompareController(state)
        self.view = CompareView()
        wire(self.controller, self.view)
        self.view.compareRequested.connect(self.open_dialog)
        self.view.tokenActivated.connect(lambda i: state.select([int(i)]))
        self.quant = QuantController(state)
        self.precision = PrecisionView()
        wire_precision(self.quant, self.precision)
        self.precision.tokenActivated.connect(lambda i: state.select([int(i)]))
        self.precision.filesRequested.connect(self._precision_with_second)
        self.controller.pairReady.connect(self._second_model)
        self.controller.pairCleared.connect(lambda _hint: self.precision.set_second_model(None))
        self.page = QTabWidget()
        self.page.setDocumentMode(True)
        self.page.addTab(self.view, "Two models")
        self.page.addTab(self.precision, "Precision")
        self.page.setTabToolTip(1, "What quantisation does to this embedding, row by row")
        self.page.currentChanged.connect(lambda _i: self._follow(host.current_tab()))
        host.add_tab(
            self.page,
            "Compare",
            "Two models side by side: neighbours, maps, overlap; precision",
            menu_text="Co&mpare",
        )
        host.add_action(
            "file",
            "compare",
            "Compare &with…",
            self.open_dialog,
            tip="Open a second model beside this one (Compare tab)",
        )
        host.tabChanged.connect(self._follow)
        self._follow(host.current_tab())
        host.add_view_state("compare", lambda: self.other, self._restore, in_slides=False)

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.host.widget, "Compare with a second model", self.host.start_dir(), OTHER_FILTER
        )
        if path:
            self.compare_with(path)

    def compare_with(self, path: str | Path | None, tensor: str | None = None) -> None:
        """Show the Compare tab with `path` as the second model (None: stop comparing)."""
        self.controller.set_other(path, tensor)
        if path is not None:
            self.page.setCurrentWidget(self.view)
            self.host.show_tab(self.page)

    def show_precision(self) -> None:
        self.page.setCurrentWidget(self.precision)
        self.host.show_tab(self.page)

    def _follow(self, shown) -> None:
        self.controller.set_active(shown is self.page and self.page.currentWidget() is self.view)

    def _second_model(self, pair: Pair) -> None:
        self.precision.set_second_model(pair.b.path.name)

    def _precision_with_second(self) -> None:
        if self.controller.pair is not None:
            self.quant.compare_with(self.controller.pair.b)

    def _restore(self, other) -> None:
        if other is not None:
            self.controller.set_other(other["path"], other.get("tensor"))
        elif self.controller.other is not None:
            self.controller.set_other(None)

    @property
    def other(self) -> dict | None:
        """B as a session stores it."""
        if self.controller.other is None:
            return None
        path, tensor = self.controller.other
        return {"path": str(Path(path).resolve()), "tensor": tensor}


def install(host: Host, state: AppState) -> Compare:
    return Compare(host, state)
