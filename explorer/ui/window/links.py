"""Where one feature's result feeds another: the wiring between installed features, kept out of
the window so that it stays a host."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow


def link_features(window: MainWindow) -> None:
    search, neighbours, maps = window.tokens.search, window.neighbor_search, window.maps
    search.queryEntered.connect(neighbours.controller.search_text)
    # a token found, or a neighbour clicked, brings the map to it
    search.tokenFound.connect(maps.pane.view.fly_to)
    neighbours.pane.tokenActivated.connect(maps.pane.view.fly_to)
    neighbours.controller.resultsReady.connect(lambda found: _offer_neighbours(window, found))
    _link_precision(window)


def _offer_neighbours(window: MainWindow, found) -> None:
    """The Neighbours pane's exact ranking of a selected token spares the map its own scan for
    the rings (a typed query, or placeholders left out of the list, cannot serve)."""
    if window.neighbors.text is None and len(found.ids) == 1 and not found.hidden:
        window.maps.pane.kept.offer(found.ids[0], found.result)


def _link_precision(window: MainWindow) -> None:
    """A precision comparison (Compare › Precision) reaches the map, whose points can be
    coloured by each row's damage, and the viewer, which shows the selected token's two rows."""
    quant, pane, viewer, host = window.compare.quant, window.maps.pane, window.viewer, window.host

    def damage(name: str, values) -> None:
        tip = f"Colour tokens by the relative error ‖q − r‖/‖r‖ of their row at {name}"
        pane.set_row_values("damage", "Damage", f"relative error at {name}", values, tip)

    def show_on_map() -> None:
        host.show_tab(pane)
        if pane.data is None and not pane.controller.running:  # a map to colour
            source = pane.source.currentData()
            if source not in ("sample", "whole") and not (
                source == "around" and window.state.selection
            ):
                pane.source.setCurrentIndex(pane.source.findData("sample"))
            pane.request_map()
        pane.show_row_values("damage")

    def show_pair() -> None:
        host.show_tab(viewer)
        if viewer.pair.shown is not None:
            viewer.tabs.setCurrentWidget(viewer.pair)

    quant.damageChanged.connect(damage)
    quant.rowReady.connect(viewer.set_pair)
    quant.cleared.connect(lambda _hint: viewer.clear_pair())
    window.compare.precision.mapRequested.connect(show_on_map)
    window.compare.precision.valuesRequested.connect(show_pair)
