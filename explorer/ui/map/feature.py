"""The Map tab: MapController computes a PCA preview then a UMAP layout; MapPane shows them and
colours tokens by kind (KindsController), and the map's settings and layout go into sessions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel

from explorer.app.controllers.kinds import KindsController
from explorer.app.controllers.map import MapController
from explorer.app.state import AppState
from explorer.core.analysis.kinds import KINDS, TokenKinds
from explorer.ui.host import Host
from explorer.ui.map.pane import MapPane


@dataclass
class Map:
    controller: MapController
    pane: MapPane
    kinds: KindsController


def install(host: Host, state: AppState, warm_up: bool = False) -> Map:
    controller = MapController(state)
    pane = MapPane(state, controller, warm_up=warm_up)
    host.add_tab(pane, "Map", "A UMAP map of a neighbourhood of tokens")
    feature = Map(controller, pane, KindsController(state))
    _colour_by_kind(feature)
    host.add_view_state("map", lambda: capture(pane), lambda v: apply(feature, host, v))
    host.add_pending(lambda: pane.view.labels_pending)
    host.add_pending(lambda: pane.kept.pending)  # the selected token's neighbour rings
    return feature


def _colour_by_kind(feature: Map) -> None:
    """ "Kind" in the colour menu, enabled once the kinds are computed (when a map is shown)."""
    pane, kinds = feature.pane, feature.kinds
    pane.colour.insertItem(pane.colour.findData("none"), "Kind", "kind")
    pane.colour.setItemData(
        pane.colour.findData("kind"),
        "Colour tokens by kind: script, digits, punctuation, bytes, special …",
        Qt.ItemDataRole.ToolTipRole,
    )
    pane.mapShown.connect(lambda _final: kinds.ensure())
    kinds.kindsReady.connect(lambda k: _kinds_ready(pane, k))
    kinds.reset.connect(lambda: pane.view.set_kinds(None))


def _kinds_ready(pane: MapPane, kinds: TokenKinds) -> None:
    pane.view.set_kinds(kinds.codes, KINDS)
    items = pane.colour.model()
    assert isinstance(items, QStandardItemModel)  # what QComboBox makes
    items.item(pane.colour.findData("kind")).setEnabled(True)
    if pane.wanted_colour == "kind":  # the whole vocabulary asks for it before kinds exist
        pane.colour.setCurrentIndex(pane.colour.findData("kind"))


def layout_of(data) -> dict | None:
    """The map on screen as a session stores it (a final layout only)."""
    if not data.final or data.whole:  # a whole-vocabulary layout lives in the cache
        return None
    nb = data.nb
    return {
        "ids": [int(i) for i in nb.ids],
        "x": [round(float(v), 5) for v in data.coords[:, 0]],
        "y": [round(float(v), 5) for v in data.coords[:, 1]],
        "title": nb.title,
        "query": [int(i) for i in nb.query_ids],
    }


def capture(pane: MapPane) -> dict:
    rect = layout = None
    if pane.data is not None:
        (x0, x1), (y0, y1) = pane.view.viewbox.viewRange()
        rect = [float(x0), float(y0), float(x1), float(y1)]
        layout = layout_of(pane.data)
    return {
        "source": pane.source.currentData(),
        "n": int(pane.n.value()),
        "method": pane.method.currentData(),
        "n_neighbors": int(pane.n_neighbors.value()),
        "min_dist": float(round(pane.min_dist.value(), 3)),
        "seed": 42,
        "colour": pane.colour.currentData(),
        "layout": layout,
        "view": rect,
    }


def _set_combo(combo, key) -> None:
    index = combo.findData(key)
    if index >= 0:
        combo.setCurrentIndex(index)


def apply(feature: Map, host: Host, settings) -> None:
    m = feature.pane
    settings = settings or {}
    _set_combo(m.source, settings.get("source"))
    _set_combo(m.method, settings.get("method"))
    _set_combo(m.colour, settings.get("colour"))
    for box, key in ((m.n, "n"), (m.n_neighbors, "n_neighbors"), (m.min_dist, "min_dist")):
        if settings.get(key) is not None:
            box.setValue(settings[key])
    rect = settings.get("view")
    if settings.get("layout"):
        _restore(feature, host, settings["layout"], rect)
    elif rect and m.data is not None:
        _zoom(m, rect)


def _zoom(pane: MapPane, rect) -> None:
    """Show the saved view rectangle [x0, y0, x1, y1]."""
    pane.view.viewbox.setRange(xRange=(rect[0], rect[2]), yRange=(rect[1], rect[3]), padding=0)


def _restore(feature: Map, host: Host, layout: dict, rect) -> None:
    """Show a saved layout (unless it is the one on screen), then its zoom."""
    m, model = feature.pane, host.state.model
    if model is None or not layout.get("ids"):
        return
    ids = layout["ids"]
    if not all(0 <= i < model.rows for i in ids + list(layout.get("query", []))):
        host.say("The saved map names tokens this model does not have")
        return
    if m.data is not None and layout_of(m.data) == layout:
        return
    coords = np.column_stack([layout["x"], layout["y"]]).astype(np.float32)

    def shown(_data) -> None:
        feature.controller.mapReady.disconnect(shown)
        if rect:
            _zoom(m, rect)

    feature.controller.mapReady.connect(shown)
    feature.controller.restore(ids, coords, layout.get("title", ""), tuple(layout.get("query", ())))
