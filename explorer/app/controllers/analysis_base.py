"""What the analysis controllers share: they work only while their view is shown (a statistics
pass reads the whole matrix), report progress, and keep the latest model's results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from explorer.app.controllers.base import FeatureController
from explorer.app.jobs import JobLane, error_message
from explorer.app.state import AppState
from explorer.core.model.embedding import EmbeddingModel

SETTLE_MS = 120  # clicking through tokens starts one job, not one per click


class AnalysisController(FeatureController):
    """Subclasses implement `refresh` (start the job the shown view needs, or emit a cached
    result). Nothing runs while `active` is False; a change marks the view stale instead."""

    progress = Signal(str, float)  # text, fraction 0..1 of the running job
    busyChanged = Signal(bool)
    failed = Signal(str)  # one line for the user
    cleared = Signal(str)  # nothing to show: a hint

    def __init__(self, state: AppState, parent: QObject | None = None):
        super().__init__(state, parent)
        self.active = False
        self._stale = True
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._refresh_if_active)
        self.lanes: list[JobLane] = []  # every lane this controller's jobs run on
        self._watch(self.lane)

    def _watch(self, lane: JobLane) -> None:
        self.lanes.append(lane)
        lane.progress.connect(self.progress.emit)
        lane.busyChanged.connect(lambda _busy: self.busyChanged.emit(self.working))

    @property
    def stale(self) -> bool:
        """The input changed since the last refresh (one is due when the view is shown)."""
        return self._stale

    @property
    def working(self) -> bool:
        return any(lane.waiting for lane in self.lanes)

    def follow_selection(self, *lanes: JobLane) -> None:
        """The jobs on `lanes` answer the selection (each reads the whole matrix): a new
        selection stops them at once, not when the settled refresh starts the next one."""

        def selection_changed(_ids) -> None:
            for lane in lanes:
                lane.cancel()
            self.changed()

        self.state.selectionChanged.connect(selection_changed)

    def set_active(self, on: bool) -> None:
        """The view became visible (compute what is stale) or hidden (stop computing)."""
        self.active = on
        if on and self._stale:
            # on the next turn: the tab's first paint and the job's start (which clears and
            # redraws its plots) are two short stretches of the GUI thread, not one long one
            QTimer.singleShot(0, self, self._refresh_if_active)

    def changed(self, now: bool = False) -> None:
        """The input changed: refresh now, after the settle delay, or when next shown."""
        self._stale = True
        if not self.active:
            return
        if now:
            self._refresh_if_active()
        else:
            self._settle.start()

    def _refresh_if_active(self) -> None:
        self._settle.stop()
        if self.active and self.state.model is not None:
            self._stale = False
            self.refresh()

    def refresh(self) -> None:
        raise NotImplementedError

    def model_changed(self, model: EmbeddingModel) -> None:
        self.forget()
        self.changed(now=True)

    def forget(self) -> None:
        """Drop every result of the previous model."""

    def submit(
        self,
        lane: JobLane,
        work: Callable,
        *args: Any,
        label: str,
        on_result: Callable,
        failed: Any = None,
    ) -> None:
        """Start `work` on `lane`; an error goes to `failed` (a signal, default: self.failed)."""
        to = failed if failed is not None else self.failed
        lane.submit(
            work,
            *args,
            label=label,
            on_result=on_result,
            on_error=lambda e: to.emit(error_message(e)),
        )
