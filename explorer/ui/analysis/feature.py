"""The analysis tabs (Explain, Head, Statistics): one controller per view, each active only while
its tab is shown."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QWidget

from explorer.app.controllers.analysis_base import AnalysisController
from explorer.app.controllers.explain import ExplainController
from explorer.app.controllers.head import HeadController
from explorer.app.controllers.stats import StatsController
from explorer.app.state import AppState
from explorer.ui.analysis.explain_view import ExplainView
from explorer.ui.analysis.head_view import HeadView
from explorer.ui.analysis.stats_view import StatsView
from explorer.ui.host import Host


def wire_explain(c: ExplainController, v: ExplainView) -> None:
    c.started.connect(v.show_pending)
    c.progress.connect(v.set_progress)
    c.resultReady.connect(v.show_result)
    c.cleared.connect(v.clear)
    c.failed.connect(v.show_error)


def wire_stats(c: StatsController, v: StatsView) -> None:
    c.started.connect(v.show_started)
    c.progress.connect(v.set_progress)
    c.busyChanged.connect(v.set_busy)
    c.resultReady.connect(v.show_result)
    c.dimensionReady.connect(v.show_dimension)
    c.cleared.connect(v.clear)
    c.failed.connect(v.show_error)
    v.dimensionRequested.connect(c.show_dimension)


def wire_head(c: HeadController, v: HeadView) -> None:
    c.started.connect(v.show_started)
    c.progress.connect(v.set_progress)
    c.busyChanged.connect(v.set_busy)
    c.resultReady.connect(v.show_result)
    c.tokenReady.connect(v.show_token)
    c.tokenCleared.connect(v.clear_token)
    c.tokenFailed.connect(v.show_token_error)
    c.cleared.connect(v.clear)
    c.failed.connect(v.show_error)


@dataclass
class Analysis:
    explain: ExplainController
    head: HeadController
    stats: StatsController
    explain_view: ExplainView
    head_view: HeadView
    stats_view: StatsView

    @property
    def controllers(self) -> dict[QWidget, AnalysisController]:
        return {
            self.explain_view: self.explain,
            self.head_view: self.head,
            self.stats_view: self.stats,
        }


def install(host: Host, state: AppState, show_rows) -> Analysis:
    """`show_rows()` shows the embedding viewer: a token picked in a view is shown there."""
    a = Analysis(
        ExplainController(state),
        HeadController(state),
        StatsController(state),
        ExplainView(),
        HeadView(),
        StatsView(),
    )
    wire_explain(a.explain, a.explain_view)
    wire_head(a.head, a.head_view)
    wire_stats(a.stats, a.stats_view)

    def open_token(token_id: int) -> None:
        state.select([int(token_id)])
        show_rows()

    a.head_view.tokenActivated.connect(open_token)
    a.stats_view.tokenActivated.connect(open_token)
    host.add_tab(
        a.explain_view, "Explain", "onehot(t) · E = E[t]: the embedding layer is a row lookup"
    )
    host.add_tab(a.head_view, "Head", "Input embedding E vs output head U; the direct path")
    host.add_tab(a.stats_view, "Statistics", "Norms, dimensions, suspicious tokens and token kinds")

    def tab_changed(shown: QWidget) -> None:
        for view, controller in a.controllers.items():
            controller.set_active(view is shown)

    host.tabChanged.connect(tab_changed)
    tab_changed(host.current_tab())
    return a
