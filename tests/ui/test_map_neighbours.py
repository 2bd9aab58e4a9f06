"""Around a token the map shows its nearest neighbours: labelled first, even when they sit
under the query's marker, and coloured on a scale that tells their similarities apart."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.ui.map.brushes import PALETTE_STEPS, continuous_brushes

N = 400


@pytest.fixture
def crowded(qtbot, make_map_view):
    """A query whose five nearest neighbours lie within a pixel or two of it, among 400 points
    whose similarities bunch between 0.15 and 0.35 (as around `cat` on the demo)."""
    rng = np.random.default_rng(7)
    coords = rng.normal(size=(N, 2)).astype(np.float32)
    coords[1:6] = coords[0] + rng.normal(scale=0.002, size=(5, 2))
    sim = np.clip(rng.normal(0.22, 0.04, N), 0.1, 0.35)
    sim[0], sim[1:6] = 1.0, [0.82, 0.56, 0.54, 0.42, 0.41]
    labels = [f"word{i}" for i in range(N)]
    v = make_map_view(700, 500)
    v.set_points(np.arange(N), labels, coords, similarity=sim, highlight=[0])
    qtbot.waitUntil(lambda: not v.labels_pending and len(v.visible_labels()) > 10)
    return v, sim


def test_the_query_and_its_nearest_neighbours_all_get_labels(crowded):
    view, _ = crowded
    shown = {i for i, _ in view.visible_labels()}
    assert set(range(6)) <= shown
    # those that could not sit beside their point are joined to it by a line
    x, _ = view._labels.leaders.getData()
    assert x is not None and len(x) >= 2


def test_similarities_spread_over_the_whole_colour_scale(crowded):
    view, sim = crowded
    palette = continuous_brushes()
    steps = [palette.index(b) for b in view._point_brushes()]
    counts = np.bincount(steps, minlength=PALETTE_STEPS)
    assert (counts > 0).sum() >= PALETTE_STEPS - 1  # a linear scale used a handful of colours
    assert counts.max() <= 3 * N / PALETTE_STEPS
    # 0.2 and 0.3 are colours apart; the best neighbour is the top colour
    near = lambda s: steps[int(np.argmin(np.abs(sim[6:] - s))) + 6]  # noqa: E731
    assert near(0.3) - near(0.2) >= PALETTE_STEPS // 3
    assert steps[1] == PALETTE_STEPS - 1


def test_a_map_without_far_outliers_shows_every_point(crowded):
    view, _ = crowded
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    x, y = view.coords[:, 0], view.coords[:, 1]
    assert ((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)).all()
