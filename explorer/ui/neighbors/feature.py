"""Nearest neighbours of the selection: NeighborsController searches, NeighborsPane shows them in
a dock; its metric and k go into sessions."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDockWidget

from explorer.app.controllers.neighbors import Neighbors, NeighborsController
from explorer.app.jobs import error_message
from explorer.app.state import AppState
from explorer.ui.host import Host
from explorer.ui.neighbors.pane import NeighborsPane
from explorer.ui.widgets.layout_fence import LayoutFence


@dataclass
class NeighborsFeature:
    controller: NeighborsController
    pane: NeighborsPane
    dock: QDockWidget


def install(host: Host, state: AppState) -> NeighborsFeature:
    controller = NeighborsController(state, auto_index=host.persist)
    pane = NeighborsPane(k=controller.k, metric=controller.metric)
    # fenced: new results re-lay out the pane only
    dock = host.add_dock(LayoutFence(pane), "Nearest neighbours")
    pane.paramsChanged.connect(lambda: controller.set_options(*pane.options))
    pane.tokenActivated.connect(lambda i: _clicked(state, i))
    controller.resultsReady.connect(lambda found: _show(pane, found))
    controller.cleared.connect(pane.clear)
    controller.failed.connect(lambda e: pane.show_error(error_message(e)))
    controller.slow.connect(pane.show_busy)
    host.add_view_state("neighbors", lambda: capture(pane), lambda v: apply(pane, v))
    host.add_pending(lambda: controller.pending)
    return NeighborsFeature(controller, pane, dock)


def _clicked(state: AppState, token_id: int) -> None:
    """A neighbour selects that token; Ctrl/Shift-click adds it, as on the token chips."""
    mods = QApplication.keyboardModifiers()
    add = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier))
    state.select([int(token_id)], add=add)


def _show(pane: NeighborsPane, found: Neighbors) -> None:
    model = found.model
    pane.show_result(found.result, model.label, model.is_unused, found.description, found.hidden)


def capture(pane: NeighborsPane) -> dict:
    return {"metric": pane.metric_name, "k": int(pane.k), "exact": False}


def apply(pane: NeighborsPane, settings) -> None:
    settings = settings or {}
    if settings.get("metric") and settings["metric"] != pane.metric_name:
        pane.metric_name = settings["metric"]
    if settings.get("k") and settings["k"] != pane.k:
        pane.k = int(settings["k"])
