"""The map: scatter hover/click/box selection and labels (MapView); the pane with real jobs."""

from __future__ import annotations

import csv
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from explorer.app.state import AppState
from explorer.core.map.geometry import points_in_polygon
from explorer.ui.map.pane import MapPane


def grid_points(n_side: int = 6):
    xs, ys = np.meshgrid(np.arange(n_side, dtype=np.float32), np.arange(n_side, dtype=np.float32))
    coords = np.column_stack([xs.ravel(), ys.ravel()]) * 10
    ids = np.arange(1000, 1000 + len(coords))
    labels = [f"tok{i}" for i in range(len(coords))]
    sim = np.linspace(1, 0, len(coords))
    return ids, labels, coords, sim


@pytest.fixture
def view(qtbot, make_map_view):
    v = make_map_view(700, 500)
    ids, labels, coords, sim = grid_points()
    v.set_points(
        ids, labels, coords, similarity=sim, norms=np.arange(len(ids)) + 1.0, highlight=[1000]
    )
    qtbot.waitUntil(lambda: len(v.visible_labels()) > 0)
    return v


def test_hover_shows_piece_id_and_similarity(qtbot, view):
    target = 1000 + 14
    pos = view.point_position(target).toPoint()
    qtbot.mouseMove(view.graphics.viewport(), pos + QPoint(1, 1))
    qtbot.waitUntil(lambda: view.hover_id == target, timeout=30000)
    assert "tok14" in view.hover_text and f"id {target}" in view.hover_text
    assert "cosine 0.6" in view.hover_text
    # far from every point: nothing hovered
    qtbot.mouseMove(view.graphics.viewport(), QPoint(3, 3))
    qtbot.waitUntil(lambda: view.hover_id is None, timeout=30000)


def test_a_highlight_outside_the_map_redraws_nothing(qtbot, view):
    """Each click in the window highlights its token here: one the map does not hold changes
    none of its points, and costs no redraw of the overlay or the labels."""
    drawn = []
    view.overlay.sigPlotChanged.connect(lambda *_: drawn.append(1))
    view.set_highlight([1000, 5, 7])  # 5 and 7 are not on the map
    view.set_highlight([1000, 9])
    assert drawn == [] and not view._label_timer.isActive()
    assert view.highlight_ids == {1000, 9}
    view.set_highlight([1001])  # a point of the map: drawn, labels placed again
    assert drawn and view._label_timer.isActive()
    assert view.visible_labels()


def test_click_emits_the_token_id(qtbot, view):
    target = 1000 + 21
    pos = view.point_position(target).toPoint()
    with qtbot.waitSignal(view.tokenClicked, timeout=30000) as sig:
        qtbot.mouseClick(view.graphics.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert sig.args == [target]


def test_box_selection_lists_the_points_inside(qtbot, view):
    with qtbot.waitSignal(view.selectionMade) as sig:
        view.select_box(-1, -1, 15, 25)  # x in {0, 10}, y in {0, 10, 20}
    chosen = sig.args[0]
    assert sorted(chosen) == sorted([1000, 1001, 1006, 1007, 1012, 1013])
    lines = view.selection_text().splitlines()
    assert len(lines) == 6 and lines[0].split("\t")[1].startswith("tok")


def send_mouse(widget, kind, pos: QPointF, buttons, modifiers) -> None:
    """A real QMouseEvent to the view's viewport (QTest's mouseMove cannot carry modifiers)."""
    button = Qt.MouseButton.LeftButton if kind != QEvent.Type.MouseMove else Qt.MouseButton.NoButton
    global_pos = QPointF(widget.mapToGlobal(pos.toPoint()))
    QApplication.sendEvent(widget, QMouseEvent(kind, pos, global_pos, button, buttons, modifiers))


def drag_lasso(qtbot, view, pixels, modifiers=Qt.KeyboardModifier.NoModifier, on_move=None):
    """Press at the first pixel, move through the rest, release at the last: a lasso drag."""
    port = view.graphics.viewport()
    left = Qt.MouseButton.LeftButton
    old_limit = pg.getConfigOption("mouseRateLimit")
    pg.setConfigOption("mouseRateLimit", 0)  # every move counts, however fast the test sends them
    try:
        send_mouse(port, QEvent.Type.MouseButtonPress, pixels[0], left, modifiers)
        for k, p in enumerate(pixels[1:]):
            send_mouse(port, QEvent.Type.MouseMove, p, left, modifiers)
            if on_move:
                on_move(k)
        with qtbot.waitSignal(view.selectionMade, timeout=30000) as sig:
            send_mouse(
                port, QEvent.Type.MouseButtonRelease, pixels[-1], Qt.MouseButton.NoButton, modifiers
            )
    finally:
        pg.setConfigOption("mouseRateLimit", old_limit)
    return sig.args[0]


def to_data(view, pixels) -> np.ndarray:
    """Viewport pixels to data coordinates, the way an independent observer would map them."""
    out = []
    for p in pixels:
        d = view.viewbox.mapSceneToView(view.graphics.mapToScene(p.toPoint()))
        out.append((d.x(), d.y()))
    return np.array(out)


def test_alt_drag_lasso_chooses_exactly_the_points_inside(qtbot, view):
    # a concave outline round the grid (points every 10 units), drawn between the points
    view.viewbox.setRange(xRange=(-15, 65), yRange=(-15, 65), padding=0)

    def px(c: float, r: float) -> QPointF:
        scene = view.viewbox.mapViewToScene(QPointF(10 * c, 10 * r))
        return QPointF(view.graphics.mapFromScene(scene))  # whole pixels, as a mouse gives

    outline = [(-0.5, -0.5), (4.5, -0.5), (4.5, 1.5), (1.5, 1.5), (1.5, 3.5), (3.5, 3.5)]
    outline += [(3.5, 4.5), (-0.5, 4.5)]
    pixels = []
    for (c0, r0), (c1, r1) in zip(outline, outline[1:] + outline[:1], strict=True):
        for t in np.linspace(0, 1, 8, endpoint=False):  # many small moves, like a hand
            pixels.append(px(c0 + (c1 - c0) * t, r0 + (r1 - r0) * t))
    pixels.append(pixels[0] + QPointF(2, 0))  # end near the start: the lasso closes itself

    seen = []

    def on_move(k: int) -> None:
        if k == len(pixels) // 2:  # mid-lasso: one path item, drawn, with the vertices so far
            item = view.viewbox.lasso_item
            seen.append(item.isVisible() and item.path().elementCount() > 10)

    chosen = drag_lasso(qtbot, view, pixels, Qt.KeyboardModifier.AltModifier, on_move)
    want = view.ids[points_in_polygon(view.coords, to_data(view, pixels))]
    # by construction: columns 0-4 of rows 0-1, columns 0-1 of rows 2-3, columns 0-3 of row 4
    expected = [r * 6 + c for r in (0, 1) for c in range(5)]
    expected += [r * 6 + c for r in (2, 3) for c in range(2)] + [4 * 6 + c for c in range(4)]
    assert sorted(chosen) == sorted(1000 + np.array(expected)) == sorted(want.tolist())
    assert seen == [True] and not view.viewbox.lasso_item.isVisible()
    assert view.selected_ids == chosen and view.viewbox.lasso_points == []
    assert len(view.selection_text().splitlines()) == len(expected)


def test_lasso_button_makes_plain_drag_a_lasso_in_the_pane(qtbot):
    pane = MapPane(AppState(), warm_up=False)
    qtbot.addWidget(pane)
    pane.resize(900, 600)
    pane.show()
    qtbot.waitExposed(pane)
    ids, labels, coords, sim = grid_points()
    pane.view.set_points(ids, labels, coords, similarity=sim)
    view = pane.view

    def px(x: float, y: float) -> QPointF:
        return QPointF(view.graphics.mapFromScene(view.viewbox.mapViewToScene(QPointF(x, y))))

    before = view.viewbox.viewRange()
    pan = [px(10, 10), px(20, 20), px(30, 30)]
    port = view.graphics.viewport()
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    send_mouse(port, QEvent.Type.MouseButtonPress, pan[0], left, none)
    for p in pan[1:]:
        send_mouse(port, QEvent.Type.MouseMove, p, left, none)
    send_mouse(port, QEvent.Type.MouseButtonRelease, px(30, 30), Qt.MouseButton.NoButton, none)
    assert view.viewbox.viewRange() != before and not view.selected_ids  # lasso off: drag pans

    qtbot.mouseClick(pane.lasso_button, Qt.MouseButton.LeftButton)
    assert pane.lasso_button.isChecked() and "drag: lasso" in pane.hint.text()
    triangle = [px(-5, -5), px(40, -5), px(-5, 40), px(-4, -5)]  # x + y < 35; x, y ≥ 0
    chosen = drag_lasso(qtbot, view, triangle)
    x, y = coords[:, 0], coords[:, 1]
    assert sorted(chosen) == sorted(ids[x + y < 35].tolist())
    assert pane.chosen.text() == f"{len(chosen)} chosen" and pane.remap_button.isEnabled()
    qtbot.mouseClick(pane.lasso_button, Qt.MouseButton.LeftButton)
    assert "Alt+drag: lasso" in pane.hint.text() and not view.viewbox.lasso_mode


def test_labels_never_overlap_and_more_appear_when_zoomed(qtbot, make_map_view):
    v = make_map_view()
    rng = np.random.default_rng(0)
    coords = rng.normal(size=(3000, 2)).astype(np.float32)
    labels = [f"word{i}" for i in range(3000)]
    v.set_points(np.arange(3000), labels, coords)

    def settled_rects():
        # labels are re-placed 60 ms after the last range/size change, and a TextItem's scene
        # rect follows the view transform only once it has been updated: wait for both
        rects = v.visible_label_rects()
        if v.labels_pending or len(rects) <= 5:
            return None
        return rects if all(r.width() < v.width() for r in rects) else None

    qtbot.waitUntil(lambda: settled_rects() is not None)
    before = len(v.visible_labels())
    rects = settled_rects()
    assert rects is not None
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            assert not a.adjusted(1, 1, -1, -1).intersects(b.adjusted(1, 1, -1, -1))
    v.viewbox.setRange(xRange=(-0.2, 0.2), yRange=(-0.2, 0.2), padding=0)

    def in_view() -> set[int]:
        (x0, x1), (y0, y1) = v.viewbox.viewRange()  # the aspect lock widens one axis
        x, y = coords[:, 0], coords[:, 1]
        ok = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
        return set(np.flatnonzero(ok).tolist())

    # the debounced relabel runs: every label shown is of a point in view
    qtbot.waitUntil(
        lambda: v.visible_labels() and {i for i, _ in v.visible_labels()} <= in_view(),
        timeout=30000,
    )
    shown = {i for i, _ in v.visible_labels()}
    # zoomed in on a dense centre, far more of the points in view get a label than before
    assert len(shown) >= min(len(in_view()), before) * 0.5
    assert len(shown) / len(in_view()) > before / 3000 * 2


def test_label_placement_is_spread_over_turns_of_the_event_loop(qtbot, make_map_view):
    """800 labels tried at once held the GUI thread for 10-30 ms while a map was drawn: the
    placement goes a few dozen tries per turn, and ends with the same labels."""
    v = make_map_view()
    coords = np.random.default_rng(1).normal(size=(2000, 2)).astype(np.float32)
    v.set_points(np.arange(2000), [f"word{i}" for i in range(2000)], coords)
    qtbot.waitUntil(lambda: not v.labels_pending)
    settled = v.visible_labels()
    v.update_labels()  # the same placement again, as after a pan that came back
    assert v._labels.placing  # not done within the call
    turns = 0
    while v.labels_pending:
        QApplication.processEvents()
        turns += 1
    assert turns >= 8  # up to 800 tries, 60 per turn, then the item changes
    assert v.visible_labels() == settled and len(settled) > 20


def test_colour_modes_and_legend(qtbot, view):
    assert view.colour_bar.isVisible()
    view.set_colour_mode("none")
    assert not view.colour_bar.isVisible()
    view.values["cluster"] = np.arange(len(view.ids)) % 3
    view.cluster_names = ["a", "b", "c"]
    view.set_colour_mode("cluster")
    assert view.legend.isVisible() and len(view.legend.items) == 3


# -- the pane, with the demo model and real jobs -------------------------------------------------


@pytest.fixture
def pane(make_map_pane):
    return make_map_pane()


def png_size(path) -> tuple[int, int]:
    data = Path(path).read_bytes()[:32]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_pca_map_of_a_selection_click_selects_and_exports(qtbot, pane, tmp_path):
    state = pane.state
    cat = state.model.tokenizer.find("cat")
    state.select([cat])
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    pane.n.setValue(200)
    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        qtbot.mouseClick(pane.map_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not pane.controller.lane.busy)
    assert pane.data.final and len(pane.data.nb) == 200 and pane.data.nb.ids[0] == cat
    assert "cat" in pane.title.text()
    assert cat in pane.view.highlight_ids

    # click the most isolated point: it, and nothing else, is selected everywhere
    coords = pane.view.coords
    gaps = np.linalg.norm(coords[:, None] - coords[None], axis=2) + np.eye(len(coords)) * 1e9
    target = int(pane.view.ids[np.argmax(gaps.min(axis=1))])
    with qtbot.waitSignal(state.selectionChanged, timeout=30000) as sig:
        qtbot.mouseClick(
            pane.view.graphics.viewport(),
            Qt.MouseButton.LeftButton,
            pos=pane.view.point_position(target).toPoint(),
        )
    assert sig.args[0] == [target] and state.selection == [target]
    assert target in pane.view.highlight_ids

    pane.export(tmp_path / "m.png", scale=2)
    assert png_size(tmp_path / "m.png") == (pane.view.width() * 2, pane.view.height() * 2)
    pane.export(tmp_path / "m.svg")
    assert ET.parse(tmp_path / "m.svg").getroot().tag.endswith("svg")
    pane.export(tmp_path / "m.csv")
    rows = list(csv.reader((tmp_path / "m.csv").read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["id", "piece", "x", "y"] and len(rows) == 201

    pane.view.select_box(-1e9, -1e9, 1e9, 1e9)
    with qtbot.waitSignal(pane.chosen_jobs.textReady, timeout=30000) as copied:
        pane.copy_selection()
    assert copied.args[0].count("\n") == 200 == copied.args[1]
    assert pane.remap_button.isEnabled()


def test_umap_map_new_request_wins(qtbot, pane):
    state = pane.state
    tok = state.model.tokenizer
    state.select([tok.find("dog")])
    pane.n.setValue(400)
    pane.request_map()  # cancelled by the next request
    state.select([tok.find("cat")])
    previews = []
    pane.mapShown.connect(previews.append)
    pane.request_map()
    qtbot.waitUntil(lambda: pane.data is not None and pane.data.final, timeout=120000)
    assert previews[:1] == [False] and previews[-1] is True  # preview first, then UMAP
    assert pane.data.nb.ids[0] == tok.find("cat")
    assert pane.data.clusters is not None and len(pane.data.cluster_names) >= 2
    assert not pane.progress.isVisible()
