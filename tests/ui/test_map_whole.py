"""The map with very many points (the whole vocabulary): one picture of the points in view (a
density image at overview, single points once few are in view) and labels from the tiles."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from explorer.app.state import AppState
from explorer.core.analysis.kinds import KINDS
from explorer.core.map import figure, tiles
from explorer.core.map.kind_colors import kind_palette
from explorer.core.map.neighborhood import Neighborhood
from explorer.core.map.pipeline import MapData
from explorer.ui.map import export
from explorer.ui.map.brushes import PALETTE_STEPS
from explorer.ui.map.layers import LAYERED_ABOVE, POINTS_BELOW
from explorer.ui.map.pane import MapPane
from explorer.ui.map.view import CLOUD_LABELS, NO_VALUE, MapView

N = max(LAYERED_ABOVE, POINTS_BELOW) + 5000


@pytest.fixture(scope="module")
def fixture_map():
    """Two blobs of points, two kinds (latin on the left, digits on the right)."""
    rng = np.random.default_rng(0)
    left = rng.standard_normal((N // 2, 2)) * [1.0, 1.0] + [-3, 0]
    right = rng.standard_normal((N - N // 2, 2)) * [1.0, 1.0] + [3, 0]
    coords = np.concatenate([left, right]).astype(np.float32)
    codes = np.where(np.arange(N) < N // 2, KINDS.index("latin"), KINDS.index("digits"))
    labels = [f"w{i}" for i in range(N)]
    return coords, codes, labels, tiles.build(coords, tiles.token_priority(np.arange(N), labels))


@pytest.fixture
def view(make_map_view, fixture_map):
    coords, codes, labels, quadtree = fixture_map
    v = make_map_view(900, 600)
    all_codes = np.zeros(N + 10, dtype=np.int64)
    all_codes[:N] = codes
    v.set_kinds(all_codes, KINDS)
    v.set_points(
        np.arange(N), labels, coords, norms=np.linalg.norm(coords, axis=1), tile_index=quadtree
    )
    v.set_colour_mode("kind")
    return v


def paint(view):
    """The view as drawn, once its layout has settled (the legend beside it)."""
    QApplication.processEvents()
    return view.graphics.grab().toImage()


def as_array(image: QImage) -> np.ndarray:
    """The image's pixels as RGB uint8 [h, w, 3]."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    raw = np.frombuffer(rgb.constBits(), np.uint8).reshape(rgb.height(), rgb.bytesPerLine())
    return raw[:, : 3 * rgb.width()].reshape(rgb.height(), rgb.width(), 3).copy()


def view_rect(view):
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    return x0, y0, x1, y1


def inside(coords, rect):
    x0, y0, x1, y1 = rect
    x, y = coords[:, 0], coords[:, 1]
    return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)


def colours_seen(image, palette_rows, tolerance=40):
    pixels = np.array(
        [
            image.pixelColor(x, y).getRgb()[:3]
            for x in range(0, image.width(), 3)
            for y in range(0, image.height(), 3)
        ]
    )
    return [bool((np.abs(pixels - row).max(axis=1) <= tolerance).any()) for row in palette_rows]


def test_overview_is_a_density_image_of_the_points_in_view_in_their_kind_colours(view, fixture_map):
    coords, codes, _, _ = fixture_map
    image = paint(view)
    assert len(view.scatter.data) == 0  # the per-point item is empty
    assert view.cloud.last_kind == "density"
    counts, extent = view.cloud.last_histogram
    rect = view_rect(view)
    # every point in view is counted once (the image covers whole tiles: a few beyond the edge)
    assert int(inside(coords, rect).sum()) <= counts.sum() <= view.cloud.in_view(rect)
    assert counts.sum() >= 0.99 * N
    assert inside(coords, extent)[inside(coords, rect)].all()  # the image covers the view
    palette = kind_palette(KINDS)
    latin, digits = palette[KINDS.index("latin")], palette[KINDS.index("digits")]
    assert colours_seen(image, [latin, digits]) == [True, True]
    # the left half of the picture is latin, the right half digits
    mid_y = image.height() // 2
    left = view.graphics.mapFromScene(view.viewbox.mapViewToScene(QPointF(-3, 0)))
    right = view.graphics.mapFromScene(view.viewbox.mapViewToScene(QPointF(3, 0)))
    near = lambda p, rgb: np.abs(np.array(image.pixelColor(p.x(), mid_y).getRgb()[:3]) - rgb).max()  # noqa: E731
    assert near(left, latin) < 60 and near(right, digits) < 60

    view.set_colour_mode("none")  # the cloud follows the colour mode
    paint(view)
    counts_plain, _ = view.cloud.last_histogram
    assert counts_plain.sum() == counts.sum()
    assert colours_seen(paint(view), [digits]) == [False]  # one colour (latin's neighbour)

    view.set_colour_mode("norm")  # a colour scale: each tile in its points' mean step
    image = paint(view)
    assert view.colour_bar.isVisible()
    steps = figure.viridis(np.linspace(0, 1, PALETTE_STEPS))
    assert sum(colours_seen(image, steps, tolerance=20)) >= PALETTE_STEPS // 2


def test_zoomed_in_the_points_in_view_are_drawn_one_by_one(view, fixture_map):
    coords, _, _, _ = fixture_map
    view.viewbox.setRange(xRange=(-3.2, -2.8), yRange=(-0.2, 0.2), padding=0)
    image = paint(view)
    assert view.cloud.last_kind == "points"
    # every point in view (and not under a label) shows at its pixel, in the latin colour
    latin = kind_palette(KINDS)[KINDS.index("latin")]
    boxes = view.visible_label_rects()
    checked = 0
    for k in np.flatnonzero(inside(coords, view_rect(view)))[:60]:
        p = view.point_position(int(k))
        at = view.graphics.mapToScene(p.toPoint())
        if any(r.adjusted(-2, -2, 2, 2).contains(at) for r in boxes):
            continue
        if 2 < p.x() < image.width() - 2 and 2 < p.y() < image.height() - 2:
            checked += 1
            rgb = np.array(image.pixelColor(int(p.x()), int(p.y())).getRgb()[:3])
            assert np.abs(rgb - latin).max() <= 60
    assert checked >= 10


def test_hover_finds_the_nearest_point_as_a_scan_of_every_point_would(view, fixture_map):
    coords, _, _, _ = fixture_map
    view.viewbox.setRange(xRange=(-3.2, -2.8), yRange=(-0.2, 0.2), padding=0)
    paint(view)
    per_px = view.viewbox.viewPixelSize()[0]
    rect = view.viewbox.sceneBoundingRect()
    rng = np.random.default_rng(5)
    found = 0
    for fx, fy in rng.random((40, 2)):
        scene = QPointF(rect.left() + fx * rect.width(), rect.top() + fy * rect.height())
        p = view.viewbox.mapSceneToView(scene)
        d = np.hypot(coords[:, 0] - p.x(), coords[:, 1] - p.y())
        k = view.nearest(scene)
        if d.min() > 8.0 * per_px:
            assert k is None
        else:
            assert k is not None and d[k] == d.min()
            found += 1
    assert found >= 10


def labels_placed(qtbot, view):
    """The labels once placed, and their scene rectangles once the text items have followed the
    view transform (until then they are measured in map units)."""

    def settled():
        rects = view.visible_label_rects()
        return not view.labels_pending and all(r.width() < view.width() / 2 for r in rects)

    qtbot.waitUntil(settled, timeout=10000)
    return view.visible_labels(), view.visible_label_rects()


@pytest.mark.parametrize("zoom", [None, (-4.0, -2.0, -1.0, 1.0), (2.9, -0.05, 3.1, 0.1)])
def test_labels_are_few_apart_and_name_tiles_of_the_visible_region(qtbot, view, fixture_map, zoom):
    coords, _, labels, _ = fixture_map
    if zoom is not None:
        x0, y0, x1, y1 = zoom
        view.viewbox.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
    shown, rects = labels_placed(qtbot, view)
    assert 5 <= len(shown) <= CLOUD_LABELS
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            assert not a.adjusted(1, 1, -1, -1).intersects(b.adjusted(1, 1, -1, -1))
    rect = view_rect(view)
    names = {int(r) for lv in view.cloud.tiles.levels for r in lv.reps}
    for token_id, text in shown:
        assert text == labels[token_id]
        assert inside(coords[token_id : token_id + 1], rect)[0]  # from the region in view
        assert token_id in names  # the name of a tile


def test_labels_follow_a_pan_at_the_next_turn_of_the_event_loop(qtbot, view, fixture_map):
    coords = fixture_map[0]
    view.viewbox.setRange(xRange=(-4, -1), yRange=(-1.5, 1.5), padding=0)
    before = {i for i, _ in labels_placed(qtbot, view)[0]}
    view.viewbox.setRange(xRange=(1, 4), yRange=(-1.5, 1.5), padding=0)
    QApplication.processEvents()  # one turn: the labels are placed and shown
    assert not view.labels_pending
    after = {i for i, _ in view.visible_labels()}
    assert inside(coords[sorted(after)], view_rect(view)).all()
    assert before and after and not before & after
    assert sum(i >= N // 2 for i in after) > 0.8 * len(after)  # the right blob's tokens


def test_the_legend_sits_beside_the_map(qtbot, view):
    view.resize(1024, 560)
    qtbot.waitUntil(lambda: view.legend.isVisible() and len(view.legend.items) == 2)
    qtbot.wait(50)
    legend = view.legend.sceneBoundingRect()
    assert not legend.intersects(view.viewbox.sceneBoundingRect())
    assert view.viewbox.sceneBoundingRect().width() > 0.6 * 1024


def test_the_4k_figure_shows_the_view_as_a_density_image_with_its_tiles_names(
    view, fixture_map, tmp_path
):
    coords, _, labels, _ = fixture_map
    view.viewbox.setRange(xRange=(-4.5, -1.5), yRange=(-1.5, 1.5), padding=0)  # the left blob
    nb = Neighborhood(np.arange(N), labels, None, (), "the whole vocabulary")
    data = MapData(nb, np.zeros((N, 0), np.float32), np.empty(0), coords, final=True)
    out = tmp_path / "map.png"
    export.write_map(view, data, out, figure_size=export.FIGURE_4K)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (3840, 2160)
    palette = kind_palette(KINDS)
    latin, digits = palette[KINDS.index("latin")], palette[KINDS.index("digits")]
    plot = image.copy(100, 180, 3840 - 100 - 520, 2160 - 180 - 80)  # the legend names both
    ink = 255.0 - as_array(plot)[::2, ::2].reshape(-1, 3)  # each pixel's ink: its colour over white
    ink = ink[ink.sum(axis=1) > 60]
    ink /= np.linalg.norm(ink, axis=1, keepdims=True)
    like = lambda rgb: ink @ ((255.0 - rgb) / np.linalg.norm(255.0 - rgb))  # noqa: E731
    latin_ink = (like(latin) > 0.98).sum()
    assert latin_ink > 500 and (like(digits) > 0.98).sum() < latin_ink / 50
    svg = export.figure_svg(view, data, export.FIGURE_4K)
    shown = {int(m) for m in re.findall(r">w(\d+)</text>", svg)}
    assert len(shown) >= 10 and sum(i < N // 2 for i in shown) > 0.9 * len(shown)  # the left blob


def test_few_points_go_back_to_one_scatter_item(view, fixture_map):
    coords, _, _, _ = fixture_map
    view.set_points(np.arange(10), [str(i) for i in range(10)], coords[:10])
    assert view.cloud.tiles is None and len(view.scatter.data) == 10


def test_a_quadtree_is_made_when_none_is_given(qtbot, fixture_map):
    coords, _, labels, made = fixture_map
    v = MapView()
    qtbot.addWidget(v)
    v.set_points(np.arange(N), labels, coords)
    np.testing.assert_array_equal(v.cloud.tiles.order, made.order)
    np.testing.assert_array_equal(v.cloud.tiles.levels[5].reps, made.levels[5].reps)


def test_the_map_tab_writes_a_many_point_figure_off_the_gui_thread(qtbot, fixture_map, tmp_path):
    coords, _, labels, quadtree = fixture_map
    state = AppState()
    pane = MapPane(state, warm_up=False)
    qtbot.addWidget(pane)
    pane.resize(1024, 700)
    pane.show()
    nb = Neighborhood(np.arange(N), labels, None, (), "the whole vocabulary")
    pane.controller.data = MapData(nb, np.zeros((N, 0), np.float32), np.empty(0), coords)
    pane.view.set_points(np.arange(N), labels, coords, tile_index=quadtree)
    saved = []
    state.statusMessage.connect(saved.append)
    for name, size in (("map.png", export.FIGURE_4K), ("map.svg", None)):
        with qtbot.waitSignal(pane.controller.exported, timeout=60000):
            pane.export(tmp_path / name, size=size)
            assert saved[-1] == f"Exporting {name}…"  # the window goes on meanwhile
        assert saved[-1] == f"Saved {name}"
    image = QImage(str(tmp_path / "map.png"))
    assert (image.width(), image.height()) == (3840, 2160)
    text = (tmp_path / "map.svg").read_text(encoding="utf-8")
    assert text.count("<image") == 1 and 'width="1920"' in text
    state.jobs.shutdown()


def test_a_row_value_source_colours_the_cloud_grey_where_it_has_no_value(view, fixture_map):
    coords = fixture_map[0]
    values = np.full(N + 10, np.nan)
    values[: N // 2] = np.linalg.norm(coords[: N // 2], axis=1)  # the left blob only
    view.set_row_values("score", values, "a score")
    view.set_colour_mode("score")
    image = paint(view)
    assert view.colour_bar.isVisible() and view.cloud.last_kind == "density"
    grey, scale = np.array(NO_VALUE), figure.viridis(np.linspace(0, 1, PALETTE_STEPS))
    right = view.graphics.mapFromScene(view.viewbox.mapViewToScene(QPointF(3, 0)))
    left = view.graphics.mapFromScene(view.viewbox.mapViewToScene(QPointF(-3, 0)))
    at = lambda p: np.array(image.pixelColor(p.x(), p.y()).getRgb()[:3])  # noqa: E731
    assert np.abs(at(right) - grey).max() < 30  # no value: grey
    assert np.abs(at(left) - grey).max() >= 30 and sum(colours_seen(image, scale, 20)) >= 4


def test_tile_names_stay_beside_their_points_without_lines_to_them(qtbot, view):
    view.set_label_size(40)  # presentation mode's large type: little room beside each point
    shown, _ = labels_placed(qtbot, view)
    assert shown
    x, _y = view._labels.leaders.getData()
    assert x is None or len(x) == 0  # callouts are for the selection, not for tile names


def test_a_legend_of_every_kind_in_presentation_type_stays_inside_the_view(qtbot, view):
    all_codes = np.arange(N + 10, dtype=np.int64) % len(KINDS)  # every kind present
    view.set_kinds(all_codes, KINDS)
    view.resize(800, 470)  # the map's part of an 800 × 800 screen in presentation mode
    view.set_label_size(26)
    qtbot.waitUntil(lambda: len(view.legend.items) == len(set(KINDS)))
    qtbot.wait(50)
    QApplication.processEvents()
    height = view.graphics.viewport().height()
    assert view.legend.sceneBoundingRect().bottom() <= height
    assert view.viewbox.sceneBoundingRect().bottom() <= height  # the map is not cut off
