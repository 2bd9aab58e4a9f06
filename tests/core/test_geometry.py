"""Point-in-polygon (the map's lasso) against an independent per-point winding-number check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.map.geometry import points_in_polygon


def winding_number(px: float, py: float, poly: np.ndarray) -> int:
    """Sum of the signed angles the polygon's edges subtend at the point, in whole turns."""
    total = 0.0
    for (ax, ay), (bx, by) in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        a = math.atan2(ay - py, ax - px)
        b = math.atan2(by - py, bx - px)
        d = b - a
        if d > math.pi:
            d -= 2 * math.pi
        elif d < -math.pi:
            d += 2 * math.pi
        total += d
    return round(total / (2 * math.pi))


def star_polygon(rng: np.random.Generator, m: int) -> np.ndarray:
    """A simple polygon, usually concave: vertices at sorted angles with random radii."""
    angles = np.sort(rng.uniform(0, 2 * np.pi, m))
    radii = rng.uniform(0.2, 1.0, m)
    centre = rng.uniform(-1, 1, 2)
    pts = np.column_stack([np.cos(angles), np.sin(angles)]) * radii[:, None] + centre
    return pts if rng.random() < 0.5 else pts[::-1]  # both orientations


@pytest.mark.parametrize("seed", range(12))
def test_matches_winding_number_on_random_simple_polygons(seed):
    rng = np.random.default_rng(seed)
    poly = star_polygon(rng, int(rng.integers(3, 40)))
    points = rng.uniform(-2.2, 2.2, size=(600, 2))
    got = points_in_polygon(points, poly)
    want = np.array([winding_number(x, y, poly) != 0 for x, y in points])
    assert got.dtype == bool and got.shape == (600,)
    assert np.array_equal(got, want)
    assert 0 < want.sum() < len(points)  # the check is not trivially all-in or all-out


def test_concave_u_shape_excludes_its_notch():
    u = np.array([[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3]], float)
    pts = np.array([[0.5, 2], [2.5, 2], [1.5, 2], [1.5, 0.5], [4, 1], [-1, 1]])
    assert points_in_polygon(pts, u).tolist() == [True, True, False, True, False, False]


def test_self_crossing_lasso_uses_even_odd():
    # a pentagram: its centre is wound twice, so even-odd leaves it out; the points are inside
    angles = np.pi / 2 + np.arange(5) * 4 * np.pi / 5
    star = np.column_stack([np.cos(angles), np.sin(angles)])
    tip = 0.9 * star[0]
    assert winding_number(0.0, 0.0, star) == 2
    assert points_in_polygon([[0.0, 0.0], tip], star).tolist() == [False, True]


def test_degenerate_inputs():
    assert points_in_polygon(np.zeros((0, 2)), [[0, 0], [1, 0], [0, 1]]).shape == (0,)
    assert not points_in_polygon([[0.1, 0.1]], [[0, 0], [1, 1]]).any()  # fewer than 3 vertices
    # ray through a vertex is counted once: points level with vertices still classify right
    diamond = np.array([[0, -1], [1, 0], [0, 1], [-1, 0]], float)
    assert points_in_polygon([[0.5, 0.0], [-2.0, 0.0], [2.0, 0.0]], diamond).tolist() == [
        True,
        False,
        False,
    ]
