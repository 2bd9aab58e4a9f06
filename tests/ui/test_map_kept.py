"""The map, linked and honest: the selected token's exact neighbours ringed where the map put
them, with the share it keeps close; Find flies the map to a token; a lasso lists, saves and
maps exactly the tokens inside. The demo model, real jobs, an offscreen window."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QPolygonF

from explorer.core.map import whole
from explorer.core.resources import demo_model_dir
from explorer.ui.map.chosen import RINGS_UP_TO
from explorer.ui.map.rings import FAR_COLOUR, KEPT_COLOUR, KEPT_ON_DARK, RING_PX
from explorer.ui.map.view import FLY_SHARE
from tests.support.ui import idle, near

SMOLLM2_SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"


@pytest.fixture
def pane(make_map_pane):
    return make_map_pane()


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
    tip = pane.kept_label.toolTip()
    assert all(f"  {model.label(int(i))}" in tip for i in view.ids[exact])

    image = view.graphics.grab().toImage()
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    inside = QRectF(x0, y0, x1 - x0, y1 - y0)
    for xy, kept in zip(view.coords[exact], shown.kept, strict=True):
        if inside.contains(QPointF(float(xy[0]), float(xy[1]))):
            assert ring_drawn(image, view, xy, KEPT_COLOUR if kept else FAR_COLOUR)
    view.set_dark(True)  # dark presentation: the same rings, the kept green lightened
    image = view.graphics.grab().toImage()
    for xy, kept in zip(view.coords[exact], shown.kept, strict=True):
        if inside.contains(QPointF(float(xy[0]), float(xy[1]))):
            assert ring_drawn(image, view, xy, KEPT_ON_DARK if kept else FAR_COLOUR)
    view.set_dark(False)

    # another token of the map, chosen there: its own rings; the view stays where it is
    other = int(view.ids[150])
    before = view.viewbox.viewRange()
    pane.state.select([other])  # as a click on the map does
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


def test_on_the_whole_vocabulary_the_rings_come_from_a_scan(qtbot, make_map_pane):
    """The whole vocabulary (2,048 real rows of SmolLM2; the layout from the cache, here the
    first picture stored as one) holds no rows: the rings come from an exact scan of the
    matrix. Flying to the token shows it; hovering there names it."""
    pane = make_map_pane(SMOLLM2_SLICE, size=(1000, 700))
    state = pane.state
    model = state.model
    params = whole.WholeParams(
        n_neighbors=pane.n_neighbors.value(), min_dist=round(pane.min_dist.value(), 3)
    )
    assert whole.save_cached(model, params, whole.first_picture(model, params))
    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        pane.source.setCurrentIndex(pane.source.findData("whole"))
    qtbot.waitUntil(lambda: not pane.controller.lane.busy, timeout=30000)
    view = pane.view
    assert pane.data.whole and len(pane.data.vectors[0]) == 0 and len(view.ids) == model.rows
    token = 1234
    state.select([token])
    view.viewbox.setRange(xRange=(1e6, 1e6 + 1), yRange=(0, 1), padding=0)
    assert view.fly_to(token)
    shown = rings_for(qtbot, pane, token)
    exact, n_kept = reference(model, view.ids, view.coords, token)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])
    assert shown.n_kept == n_kept and f"{n_kept} of 10" in pane.kept_label.text()
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    x, y = view.coords[shown.row]
    assert x0 < x < x1 and y0 < y < y1
    scene = view.viewbox.mapViewToScene(QPointF(float(x), float(y)))
    view._mouse_moved((scene,))
    assert f"id {token}" in view.hover_text


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
    with qtbot.waitSignal(pane.chosen_jobs.textReady, timeout=30000) as copied:
        pane.copy_selection()
    assert {int(line.split("\t")[0]) for line in copied.args[0].splitlines()} == inside
    assert QGuiApplication.clipboard().text() == copied.args[0]
    with qtbot.waitSignal(pane.chosen_jobs.saved, timeout=30000):
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

    # Find again, the token already selected: the map flies there all the same
    view.viewbox.setRange(xRange=(far, far + 1), yRange=(0, 1), padding=0)
    win.search.setText("kitten")
    win.search.returnPressed.emit()
    qtbot.waitUntil(lambda: view.viewbox.viewRange()[0][0] < x < view.viewbox.viewRange()[0][1])

    shown = rings_for(qtbot, pane, kitten)
    idle(qtbot, win)
    assert pane.kept._offered is not None and pane.kept._offered[0] == kitten
    exact, n_kept = reference(win.state.model, view.ids, view.coords, kitten)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])
    assert shown.n_kept == n_kept
    # a click in the Neighbours pane flies there too; a plain selection leaves the view alone
    dogs = win.state.model.tokenizer.find("dogs")
    assert view.holds(dogs)
    view.viewbox.setRange(xRange=(far, far + 1), yRange=(0, 1), padding=0)
    win.neighbors_pane.tokenActivated.emit(dogs)
    assert win.state.selection == [dogs]
    x, y = view.coords[list(view.ids).index(dogs)]
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    assert x0 < x < x1 and y0 < y < y1
    view.viewbox.setRange(xRange=(far, far + 1), yRange=(0, 1), padding=0)
    before = view.viewbox.viewRange()
    win.state.select([kitten])  # e.g. a slide's selection: its own saved view stays
    assert view.viewbox.viewRange() == before

    # while another tab is shown, a new selection asks for no rings; showing the map does
    win.host.show_tab(win.viewer)
    dog = win.state.model.tokenizer.find("dog")
    assert view.holds(dog)
    win.state.select([dog])
    idle(qtbot, win)
    assert pane.kept.wanted is None and view.rings.shown is None
    win.host.show_tab(pane)
    shown = rings_for(qtbot, pane, dog)
    exact, _ = reference(win.state.model, view.ids, view.coords, dog)
    np.testing.assert_array_equal(shown.ids, view.ids[exact])


def test_a_lasso_over_most_of_a_large_map_marks_every_chosen_point(make_map_view):
    """Past RINGS_UP_TO chosen points the marks are one PointsItem, not a ring item each."""
    view = make_map_view()
    n = RINGS_UP_TO * 4
    coords = np.random.default_rng(0).standard_normal((n, 2)).astype(np.float32)
    view.set_points(np.arange(n) + 7, [f"t{i}" for i in range(n)], coords)
    square = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
    view.select_lasso(square)
    inside = (np.abs(coords) < 1).all(axis=1)
    assert view.selected_ids == (np.flatnonzero(inside) + 7).tolist()
    assert inside.sum() > RINGS_UP_TO and view.chosen_marks.count() == inside.sum()
    assert len(view.chosen_marks.rings.data) == 0
    view.viewbox.setRange(xRange=(-0.5, 0.5), yRange=(-0.5, 0.5), padding=0)
    image = view.graphics.grab().toImage()
    dark = [
        image.pixelColor(x, y).lightness() < 40
        for x in range(0, image.width(), 3)
        for y in range(0, image.height(), 3)
    ]
    assert 0.02 < np.mean(dark) < 0.9  # the chosen squares, not a blank or black view
    view.viewbox.setRange(xRange=(50, 51), yRange=(50, 51), padding=0)
    view.graphics.grab()  # none in view: nothing to draw, and no error
    view.select_box(-0.1, -0.1, 0.1, 0.1)  # few: a ring each
    assert 0 < len(view.chosen_marks.rings.data) == len(view.selected_ids) <= RINGS_UP_TO
    assert view.chosen_marks.count() == len(view.selected_ids)
