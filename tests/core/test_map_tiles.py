"""The quadtree of a map's tiles and the pictures made from it (density image, splatted points),
checked against brute force on fixture coordinates."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.map import density, tiles


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(3)
    xy = np.concatenate(
        [rng.standard_normal((3000, 2)) * [3, 1] + [4, 0], rng.standard_normal((2000, 2))]
    ).astype(np.float32)
    xy[17] = np.nan  # left out
    return xy, tiles.build(xy)


def inside(xy, rect):
    x0, y0, x1, y1 = rect
    return np.flatnonzero((xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1))


def tile_of(t: tiles.Tiles, level: int, xy: np.ndarray) -> np.ndarray:
    s = t.tile_side(level)
    return np.floor((xy - np.array(t.origin)) / s).astype(np.int64)


def test_every_level_holds_every_finite_point_once_in_its_own_tile(points):
    xy, t = points
    assert len(t.order) == len(xy) - 1 and 17 not in set(t.order.tolist())
    for level in (0, 3, 7, t.depth):
        lv = t.levels[level]
        assert lv.counts.sum() == len(t.order)
        members = np.repeat(np.arange(len(lv.counts)), lv.counts)
        cells = tile_of(t, level, xy[t.order].astype(np.float64))
        np.testing.assert_array_equal(cells[:, 0], lv.ix[members])
        np.testing.assert_array_equal(cells[:, 1], lv.iy[members])


def test_a_tile_is_named_by_its_point_of_lowest_priority_and_keeps_the_name_in_a_child():
    rng = np.random.default_rng(0)
    xy = rng.random((800, 2))
    priority = rng.permutation(800)
    t = tiles.build(xy, priority, depth=6)
    for level in (1, 4):
        lv = t.levels[level]
        for k in range(len(lv.counts)):
            members = t.order[lv.starts[k] : lv.starts[k] + lv.counts[k]]
            assert lv.reps[k] == members[np.argmin(priority[members])]
        children = set(t.levels[level + 1].reps.tolist())
        assert set(lv.reps.tolist()) <= children


def test_positions_in_a_rectangle_cover_exactly_its_points_and_few_more(points):
    xy, t = points
    for rect in [(0.5, -0.5, 2.0, 0.7), (-10, -10, 20, 10), (6.0, 1.0, 6.3, 1.2), (50, 50, 60, 60)]:
        found = t.order[t.positions_in(rect)]
        truth = inside(xy, rect)
        assert set(truth.tolist()) <= set(found.tolist())
        assert len(found) == t.count_in(rect) == len(set(found.tolist()))
        assert len(found) <= 4 * len(truth) + 50  # near the rectangle only


def test_label_candidates_are_tile_names_from_the_view_coarse_first(points):
    xy, t = points
    rect = (1.0, -1.0, 5.0, 1.5)
    per_px = 4.0 / 400  # the rectangle 400 pixels wide
    reps = t.labels_in(rect, per_px, 90)
    assert len(reps) == len(set(reps.tolist())) > 4
    level = t.level_for(per_px, 90)
    assert t.tile_side(level) / per_px <= 90 < 2 * t.tile_side(level) / per_px
    all_reps = {int(r) for lv in t.levels[: level + 1] for r in lv.reps}
    assert set(reps.tolist()) <= all_reps
    assert set(reps.tolist()) <= set(inside(xy, rect).tolist())
    np.testing.assert_array_equal(t.xy[t.position[reps]], xy[reps])
    # the names of the coarsest tiles come first
    coarse = [r for r in t.levels[1].reps if r in set(inside(xy, rect).tolist())]
    assert set(reps[: len(coarse)].tolist()) == set(coarse)


def test_token_priority_prefers_whole_words_then_low_ids():
    ids = np.arange(8)
    labels = ["<0xA3>", "ion", "␣ab", "␣the", ".", "␣cat", "␣x-ray", "␣Sunday"]
    order = np.argsort(tiles.token_priority(ids, labels))
    assert [labels[i] for i in order] == [
        "␣the", "␣cat", "␣Sunday", "ion", "␣x-ray", "␣ab", "<0xA3>", "."
    ]  # fmt: skip
    wordpiece = ["##ing", "to", "knight", "[UNK]", "a"]
    order = np.argsort(tiles.token_priority(np.arange(5), wordpiece))
    assert [wordpiece[i] for i in order] == ["knight", "##ing", "[UNK]", "to", "a"]


def test_histogram_matches_numpy_and_names_each_cell_by_its_commonest_code():
    rng = np.random.default_rng(1)
    xy = rng.random((5000, 2)) * 10
    codes = rng.integers(0, 3, 5000)
    rect, shape = (2.0, 1.0, 8.0, 7.0), (30, 40)
    counts, code = density.histogram(xy, rect, shape, codes, 3)
    ref, _, _ = np.histogram2d(xy[:, 1], xy[:, 0], bins=shape, range=[(1.0, 7.0), (2.0, 8.0)])
    np.testing.assert_array_equal(counts, ref[::-1].astype(np.int64))  # row 0 at the top
    assert counts.sum() == len(inside(xy, rect)) - 0  # every point in view, once
    cell, kept = density.cell_of(xy, rect, shape)
    for c in np.unique(cell)[:50]:
        here = codes[kept][cell == c]
        tally = np.bincount(here, minlength=3)
        assert tally[code.ravel()[c]] == tally.max()
    # a colour scale of 2 steps (codes 0, 1) and code 2 for points without a value
    _, mean = density.histogram(xy, rect, shape, codes, 3, steps=2)
    for c in np.unique(cell)[:50]:
        here = codes[kept][cell == c]
        valued = here[here < 2]
        want = round(valued.mean()) if len(valued) else 2
        assert mean.ravel()[c] == want


def test_tile_histogram_counts_the_points_of_the_tiles_in_view(points):
    xy, t = points
    rect = (0.0, -1.0, 6.0, 2.0)
    for level in (4, 6, 8):
        codes = density.tile_codes(t.levels[level], None, 1)
        counts, _, extent = density.tile_histogram(t, level, rect, codes)
        lv = t.levels[level]
        assert counts.sum() == lv.counts[t.tiles_in(level, rect)].sum()
        assert counts.sum() >= len(inside(xy, rect))
        x0, y0, x1, y1 = extent
        s = t.tile_side(level)
        assert counts.shape == (round((y1 - y0) / s), round((x1 - x0) / s))
        assert x0 <= rect[0] and y0 <= rect[1] and x1 >= rect[2] and y1 >= rect[3]


def test_tile_codes_are_each_tiles_commonest_code(points):
    xy, t = points
    codes = (xy[:, 0] > 3).astype(np.int64)
    lv = t.levels[5]
    by_tile = density.tile_codes(lv, codes[t.order], 2)
    for k in range(0, len(lv.counts), 7):
        members = t.order[lv.starts[k] : lv.starts[k] + lv.counts[k]]
        tally = np.bincount(codes[members], minlength=2)
        assert tally[by_tile[k]] == tally.max()


def test_shade_is_clear_where_empty_and_more_opaque_where_crowded():
    counts = np.array([[0, 1, 4], [30, 0, 2]])
    code = np.array([[0, 0, 1], [1, 0, 0]])
    palette = np.array([[200, 0, 0], [0, 0, 200]])
    rgba = density.shade(counts, code, palette)
    assert rgba[0, 0, 3] == 0 and rgba[1, 1, 3] == 0
    alpha = rgba[..., 3].astype(int)
    assert alpha[0, 1] < alpha[1, 2] < alpha[0, 2] < alpha[1, 0]
    assert rgba[1, 0, 2] > 0 and rgba[1, 0, 0] == 0  # code 1: blue, premultiplied
    assert (rgba[..., :3].max(axis=-1) <= rgba[..., 3]).all()


def test_splat_draws_each_point_as_a_square_in_its_colour():
    px = np.array([[5.2, 5.7], [0.0, 0.0], [19.9, 9.9], [50, 50]])
    palette = np.array([[255, 0, 0], [0, 255, 0]])
    rgba = density.splat(px, np.array([0, 1, 0, 1]), palette, (10, 20), 3, alpha=255)
    assert (rgba[4:7, 4:7] == [255, 0, 0, 255]).all()
    assert (rgba[0:2, 0:2] == [0, 255, 0, 255]).all()  # clipped at the edge
    assert (rgba[8:10, 18:20, 3] == 255).all()
    assert (rgba[..., 3] > 0).sum() == 9 + 4 + 4
    white = density.over_white(rgba)
    assert white.shape == (10, 20, 3) and (white[0, 10] == 255).all()


def test_a_tile_is_named_by_its_first_usable_candidate_or_left_unnamed():
    rng = np.random.default_rng(5)
    xy = rng.random((3000, 2))
    priority = rng.permutation(3000)
    t = tiles.build(xy, priority, depth=7)
    usable = lambda points: points % 3 == 0  # noqa: E731  (stands for "the font draws it")

    def name(level: int, k: int) -> int | None:  # brute force
        lv = t.levels[level]
        members = t.order[lv.starts[k] : lv.starts[k] + lv.counts[k]]
        best = members[np.argsort(priority[members])][: tiles.CANDIDATES]
        return next((int(p) for p in best if p % 3 == 0), None)

    for level in (2, 5):
        lv = t.levels[level]
        names = tiles.first_usable(lv.candidates, usable)
        want = [n for k in range(len(lv.counts)) if (n := name(level, k)) is not None]
        assert names.tolist() == want
        assert len(want) < len(lv.counts)  # some tiles have no usable candidate
        # a name shown at one zoom stays when zooming in
        assert set(names.tolist()) <= set(
            tiles.first_usable(t.levels[level + 1].candidates, usable).tolist()
        )
    rect = (0.2, 0.2, 0.7, 0.6)
    shown = t.labels_in(rect, 0.5 / 500, 90, usable)
    assert len(shown) > 4 and (shown % 3 == 0).all()
    assert set(shown.tolist()) <= set(inside(xy, rect).tolist())
