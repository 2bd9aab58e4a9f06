"""Wiring of the analysis views into the main window: one controller per view, the views as tabs
beside Embedding and Map, and each controller active only while its tab is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel

from explorer.app.controllers.explain import ExplainController
from explorer.app.controllers.head import HeadController
from explorer.app.controllers.kinds import KindsController
from explorer.app.controllers.stats import StatsController
from explorer.core.analysis.kinds import KINDS, TokenKinds
from explorer.ui.analysis.explain_view import ExplainView
from explorer.ui.analysis.head_view import HeadView
from explorer.ui.analysis.stats_view import StatsView
from explorer.ui.view_tabs import add_view_tab

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow


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


class AnalysisTabs:
    """Owns the analysis controllers and views of one window."""

    def __init__(self, window: MainWindow):
        self.window = window
        state = window.state
        self.explain, self.explain_view = ExplainController(state), ExplainView()
        self.head, self.head_view = HeadController(state), HeadView()
        self.stats, self.stats_view = StatsController(state), StatsView()
        wire_explain(self.explain, self.explain_view)
        wire_head(self.head, self.head_view)
        wire_stats(self.stats, self.stats_view)
        self.head_view.tokenActivated.connect(self.open_token)
        self.stats_view.tokenActivated.connect(self.open_token)
        self.controllers = {
            self.explain_view: self.explain,
            self.head_view: self.head,
            self.stats_view: self.stats,
        }
        add_view_tab(
            window,
            self.explain_view,
            "Explain",
            "onehot(t) · E = E[t]: the embedding layer is a row lookup",
        )
        add_view_tab(
            window, self.head_view, "Head", "Input embedding E vs output head U; the direct path"
        )
        add_view_tab(
            window,
            self.stats_view,
            "Statistics",
            "Norms, dimensions, suspicious tokens and token kinds",
        )
        window.centre.currentChanged.connect(self._tab_changed)
        self._tab_changed(window.centre.currentIndex())
        self.kinds = KindsController(state)
        self._colour_by_kind()

    def _colour_by_kind(self) -> None:
        """Adds "Kind" to the map's colour menu; computed when a map is first shown."""
        pane = self.window.map_pane
        pane.colour.insertItem(pane.colour.findData("none"), "Kind", "kind")
        pane.colour.setItemData(
            pane.colour.findData("kind"),
            "Colour tokens by kind: script, digits, punctuation, bytes, special …",
            Qt.ItemDataRole.ToolTipRole,
        )
        pane.mapShown.connect(lambda _final: self.kinds.ensure())
        self.kinds.kindsReady.connect(self._kinds_ready)
        self.kinds.reset.connect(lambda: pane.view.set_kinds(None))

    def _kinds_ready(self, kinds: TokenKinds) -> None:
        pane = self.window.map_pane
        pane.view.set_kinds(kinds.codes, KINDS)
        items = pane.colour.model()
        assert isinstance(items, QStandardItemModel)  # what QComboBox makes
        items.item(pane.colour.findData("kind")).setEnabled(True)

    def _tab_changed(self, _index: int) -> None:
        shown = self.window.centre.currentWidget()
        for view, controller in self.controllers.items():
            controller.set_active(view is shown)

    def open_token(self, token_id: int) -> None:
        """Select a token and show it in the embedding viewer."""
        self.window.state.select([int(token_id)])
        self.window.centre.setCurrentWidget(self.window.viewer)
