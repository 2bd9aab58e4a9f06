"""What the window shows, as the plain dict a session or a slide stores, and back.

The keys are those of `explorer.core.session` (its docstring documents them): text,
selection, tab, neighbors and map. The model is the session's business, not a view's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from explorer.core.session import Session

if TYPE_CHECKING:
    from explorer.ui.window.main_window import MainWindow


def tab_names(window: MainWindow) -> list[str]:
    """Tab keys of the centre: "embedding", "map" and any tab added later, by its title."""
    centre = window.centre
    return [centre.tabText(i).replace("&", "").strip().lower() for i in range(centre.count())]


def capture(window: MainWindow) -> dict:
    """The view state: text, selection, tab, neighbour settings and map settings."""
    pane = window.map_pane
    view = pane.view
    rect = layout = None
    if pane.data is not None:
        (x0, x1), (y0, y1) = view.viewbox.viewRange()
        rect = [float(x0), float(y0), float(x1), float(y1)]
        layout = layout_of(pane.data)
    names = tab_names(window)
    return {
        "text": window.state.text,
        "selection": [int(i) for i in window.state.selection],
        "tab": names[window.centre.currentIndex()] if names else "embedding",
        "neighbors": {
            "metric": window.neighbors_pane.metric_name,
            "k": int(window.neighbors_pane.k),
            "exact": False,
        },
        "map": {
            "source": pane.source.currentData(),
            "n": int(pane.n.value()),
            "method": pane.method.currentData(),
            "n_neighbors": int(pane.n_neighbors.value()),
            "min_dist": float(round(pane.min_dist.value(), 3)),
            "seed": 42,
            "colour": pane.colour.currentData(),
            "layout": layout,
            "view": rect,
        },
    }


def layout_of(data) -> dict | None:
    """The map on screen as a session stores it (a final layout only)."""
    if not data.final:
        return None
    nb = data.nb
    return {
        "ids": [int(i) for i in nb.ids],
        "x": [round(float(v), 5) for v in data.coords[:, 0]],
        "y": [round(float(v), 5) for v in data.coords[:, 1]],
        "title": nb.title,
        "query": [int(i) for i in nb.query_ids],
    }


def _restore_map(window: MainWindow, layout: dict, rect) -> None:
    """Show a saved layout (unless it is the one on screen), then its zoom."""
    m, model = window.map_pane, window.state.model
    if model is None or not layout.get("ids"):
        return
    ids = layout["ids"]
    if not all(0 <= i < model.rows for i in ids + list(layout.get("query", []))):
        window.state.statusMessage.emit("The saved map names tokens this model does not have")
        return
    if m.data is not None and layout_of(m.data) == layout:
        return
    coords = np.column_stack([layout["x"], layout["y"]]).astype(np.float32)

    def shown(_data) -> None:
        window.map.mapReady.disconnect(shown)
        if rect:
            m.view.viewbox.setRange(xRange=(rect[0], rect[2]), yRange=(rect[1], rect[3]), padding=0)

    window.map.mapReady.connect(shown)
    window.map.restore(ids, coords, layout.get("title", ""), tuple(layout.get("query", ())))


def _set_combo(combo, key) -> None:
    index = combo.findData(key)
    if index >= 0:
        combo.setCurrentIndex(index)


def apply(window: MainWindow, view: dict, select: bool = True) -> None:
    """Show a captured state. `select=False` leaves the selection (no model to check it on)."""
    if view.get("text", "") != window.state.text:
        window.token_pane.set_text(view.get("text", ""))
    names = tab_names(window)
    if view.get("tab") in names:
        window.centre.setCurrentIndex(names.index(view["tab"]))
    nb = view.get("neighbors") or {}
    pane = window.neighbors_pane
    if nb.get("metric") and nb["metric"] != pane.metric_name:
        pane.metric_name = nb["metric"]
    if nb.get("k") and nb["k"] != pane.k:
        pane.k = int(nb["k"])
    settings = view.get("map") or {}
    m = window.map_pane
    _set_combo(m.source, settings.get("source"))
    _set_combo(m.method, settings.get("method"))
    _set_combo(m.colour, settings.get("colour"))
    for box, key in ((m.n, "n"), (m.n_neighbors, "n_neighbors"), (m.min_dist, "min_dist")):
        if settings.get(key) is not None:
            box.setValue(settings[key])
    rect = settings.get("view")
    if settings.get("layout"):
        _restore_map(window, settings["layout"], rect)
    elif rect and m.data is not None:
        m.view.viewbox.setRange(xRange=(rect[0], rect[2]), yRange=(rect[1], rect[3]), padding=0)
    if select and window.state.model is not None:
        ids = [i for i in view.get("selection", []) if 0 <= i < window.state.model.rows]
        if ids != window.state.selection:
            window.state.select(ids)


def session_of(window: MainWindow, slides: list[dict]) -> Session:
    """The whole window as a Session (its model recorded with size and time)."""
    from explorer.core.session import ModelRef

    state = capture(window)
    model = window.state.model
    return Session(
        model=None if model is None else ModelRef.of(model),
        text=state["text"],
        selection=state["selection"],
        tab=state["tab"],
        neighbors=state["neighbors"],
        map=state["map"],
        slides=[dict(s) for s in slides],
        compare=window.compare.other,
    )
