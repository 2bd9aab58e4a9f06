"""Plane geometry for the map: which points lie inside a freehand (lasso) polygon."""

from __future__ import annotations

import numpy as np


def points_in_polygon(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Boolean mask of the points (n × 2) inside the polygon (m × 2, closed implicitly).

    Even–odd rule by ray casting: a horizontal ray from each point crosses the boundary an odd
    number of times iff the point is inside, so self-crossing lassos behave like a fill. The
    loop runs over the polygon's edges, each step vectorised over all points (a lasso has a few
    hundred vertices at most; the map up to 50,000 points). Points on the boundary may fall either
    way.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    poly = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    inside = np.zeros(len(pts), dtype=bool)
    if len(poly) < 3 or not len(pts):
        return inside
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    cand = np.flatnonzero(np.all((pts >= lo) & (pts <= hi), axis=1))  # bounding box first
    x, y = pts[cand, 0], pts[cand, 1]
    odd = np.zeros(len(cand), dtype=bool)
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    for ax, ay, bx, by in zip(x0, y0, x1, y1, strict=True):
        if ay == by:
            continue  # a horizontal edge never crosses a horizontal ray
        # half-open in y, so a ray through a shared vertex counts that vertex once
        spans = (ay > y) != (by > y)
        cross_x = ax + (y - ay) * (bx - ax) / (by - ay)
        odd ^= spans & (x < cross_x)
    inside[cand] = odd
    return inside
