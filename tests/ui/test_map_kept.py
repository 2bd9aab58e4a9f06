"""The map, linked and honest: the selected token's exact neighbours ringed where the map put
them, with the share it keeps close; Find flies the map to a token; a lasso lists, saves and
maps exactly the tokens inside. The demo model, real jobs, an offscreen window."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPolygonF

from explorer.app.state import AppState
from explorer.core.resources import demo_model_dir
from explorer.ui.map.pane import MapPane
from explorer.ui.map.rings import FAR_COLOUR, KEPT_COLOUR, RING_PX
from explorer.ui.map.view import FLY_SHARE
from tests.support.ui import idle, near


@pytest.fixture
def pane(qtbot):
    state = AppState()
    p = MapPane(state, warm_up=False)
    qtbot.addWidget(p)
    p.resize(1100, 750)
    p.show()
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(demo_model_dir())
    yield p
    state.jobs.shutdown()


def pca_map_around(qtbot, pane, word: str, n: int = 300) -> int:
    token = pane.state.model.tokenizer.find(word)
    pane.state.select([token])
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    pane.n.setValue(n)
    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        pane.request_map()
    qtbot.waitUntil(lambda: not pane.controller.lane.busy, timeout=30000)
    return token


def reference(model, ids: np.ndarray, coords: np.ndarray, token: int):
    """Map rows of the token's exact cosine top-10 among the map's points, and how many of
    them are among its 10 nearest map points: plain numpy, full sorts."""
    x = model.vectors(ids).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    row = int(np.flatnonzero(ids == token)[0])
    sims = x @ x[row]
    sims[row] = -np.inf
    exact = np.argsort(-sims, kind="stable")[:10]
    d = np.linalg.norm(coords.astype(np.float64) - coords[row], axis=1)
    d[row] = np.inf
    close = np.argsort(d, kind="stable")[:10]
    return exact, len(set(exact.tolist()) & set(close.tolist()))


def rings_for(qtbot, pane, token: int):
    qtbot.waitUntil(
        lambda: pane.view.rings.shown is not None and pane.view.rings.shown.token == token,
        timeout=30000,
    )
    return pane.view.rings.shown


def ring_drawn(image, view, xy, colour: str) -> bool:
    """A pixel of the ring's colour on the circle around the map point xy."""
    scene = view.viewbox.mapViewToScene(QPointF(float(xy[0]), float(xy[1])))
    centre = view.graphics.mapFromScene(scene)
    r = RING_PX / 2
    for angle in np.linspace(0, 2 * np.pi, 48, endpoint=False):
        for dr in (-1.5, -0.5, 0.5, 1.5):
            px = round(centre.x() + (r + dr) * np.cos(angle))
            py = round(centre.y() + (r + dr) * np.sin(angle))
            if 0 <= px < image.width() and 0 <= py < image.height():
                if near(image.pixelColor(px, py).name(), colour, 40):
                    return True
    return False


def test_rings_sit_on_the_exact_neighbours_and_the_kept_share_is_numpys(qtbot, pane):
    model = pane.state.model
    cat = pca_map_around(qtbot, pane, "cat")
    view = pane.view
    shown = rings_for(qtbot, pane, cat)
    exact, n_kept = reference(model, view.ids, view.coords, cat)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])
    np.testing.assert_allclose(pane.view.rings.positions(), view.coords[exact], rtol=1e-6)
    assert shown.n_kept == n_kept
    assert f"{n_kept} of 10" in pane.kept_label.text() and "cat" in pane.kept_label.text()

    image = view.graphics.grab().toImage()
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    inside = QRectF(x0, y0, x1 - x0, y1 - y0)
    for xy, kept in zip(view.coords[exact], shown.kept, strict=True):
        if inside.contains(QPointF(float(xy[0]), float(xy[1]))):
            assert ring_drawn(image, view, xy, KEPT_COLOUR if kept else FAR_COLOUR)

    # another token of the map, chosen there: its own rings; the view stays where it is
    other = int(view.ids[150])
    before = view.viewbox.viewRange()
    pane._select_clicked(other)
    shown = rings_for(qtbot, pane, other)
    exact, n_kept = reference(model, view.ids, view.coords, other)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])
    assert shown.n_kept == n_kept
    assert view.viewbox.viewRange() == before

    # a token that is not on the map: no rings, and the pane says so
    off = next(i for i in range(1000, 30000) if not view.holds(i))
    pane.state.select([off])
    qtbot.waitUntil(lambda: view.rings.shown is None)
    assert "not on this map" in pane.kept_label.text()
    assert len(view.rings.positions()) == 0


def test_a_lasso_lists_saves_and_maps_exactly_the_tokens_inside(qtbot, pane, tmp_path):
    pca_map_around(qtbot, pane, "dog", n=400)
    view = pane.view
    lo, hi = np.percentile(view.coords, [20, 80], axis=0)
    mid = (lo + hi) / 2
    polygon = [(lo[0], lo[1]), (hi[0], lo[1]), (mid[0], mid[1]), (hi[0], hi[1]), (lo[0], hi[1])]
    view.select_lasso(polygon)
    qt_polygon = QPolygonF([QPointF(float(x), float(y)) for x, y in polygon])
    inside = {
        int(i)
        for i, (x, y) in zip(view.ids, view.coords, strict=True)
        if qt_polygon.containsPoint(QPointF(float(x), float(y)), Qt.FillRule.OddEvenFill)
    }
    assert len(inside) >= 2 and set(view.selected_ids) == inside
    assert pane.chosen.text() == f"{len(inside):,} chosen"
    copied = pane.copy_selection().splitlines()
    assert {int(line.split("\t")[0]) for line in copied} == inside
    pane.export_chosen(tmp_path / "chosen.csv")
    rows = list(csv.reader((tmp_path / "chosen.csv").read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["id", "piece", "x", "y"]
    assert {int(r[0]) for r in rows[1:]} == inside and len(rows) == len(inside) + 1
    labels = {int(i): label for i, label in zip(view.ids, view.labels, strict=True)}
    assert all(r[1] == labels[int(r[0])] for r in rows[1:])

    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        pane.map_chosen()
    qtbot.waitUntil(lambda: not pane.controller.lane.busy, timeout=30000)
    assert set(pane.data.nb.ids.tolist()) == inside


def test_find_flies_the_map_to_the_token_and_lends_the_rings_its_ranking(qtbot, make_window):
    win = make_window(demo_model_dir())
    pane = win.map_pane
    win.host.show_tab(pane)
    pca_map_around(qtbot, pane, "cat", n=500)
    idle(qtbot, win)
    view = pane.view
    kitten = win.state.model.tokenizer.find("kitten")
    assert view.holds(kitten)
    x, y = view.coords[list(view.ids).index(kitten)]
    far = float(view.coords[:, 0].max()) + 100.0  # a view with no point in it
    view.viewbox.setRange(xRange=(far, far + 1), yRange=(0, 1), padding=0)

    win.search.setText("kitten")
    win.search.returnPressed.emit()
    qtbot.waitUntil(lambda: win.state.selection == [kitten], timeout=30000)
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    assert x0 < x < x1 and y0 < y < y1
    assert abs((x0 + x1) / 2 - x) < 0.05 * (x1 - x0)  # centred on it
    full = np.ptp(view.coords, axis=0).max()
    assert x1 - x0 <= FLY_SHARE * full * 1.5  # zoomed in, not the whole map

    shown = rings_for(qtbot, pane, kitten)
    idle(qtbot, win)
    assert pane.kept._offered is not None and pane.kept._offered[0] == kitten
    exact, n_kept = reference(win.state.model, view.ids, view.coords, kitten)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])
    assert shown.n_kept == n_kept
