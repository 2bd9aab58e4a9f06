"""Pictures of very many points as pixel arrays, without Qt: a density image (a 2-D histogram
of the points in a rectangle, each cell in its points' colour, opaque where they are many) and
points splatted as small squares. Both are premultiplied RGBA uint8 arrays [h, w, 4], row 0 at
the top; the window draws them as one image per frame, the figure embeds them."""

from __future__ import annotations

import numpy as np

from explorer.core.map.tiles import Level, Tiles

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in map coordinates (y up)

ALPHA_FEW, ALPHA_MANY = 0.30, 0.95  # a cell's opacity, from one point to the crowded cells
CROWDED_QUANTILE = 99  # cells at this percentile of the counts and above are fully "many"


def cell_of(xy: np.ndarray, rect: Rect, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(cell number row * w + col of each point inside `rect`, which points those are)."""
    x0, y0, x1, y1 = rect
    h, w = shape
    col = (xy[:, 0] - np.float32(x0)) * np.float32(w / (x1 - x0))
    row = (np.float32(y1) - xy[:, 1]) * np.float32(h / (y1 - y0))
    inside = (col >= 0) & (col < w) & (row >= 0) & (row < h)
    return row[inside].astype(np.int64) * w + col[inside].astype(np.int64), inside


def histogram(
    xy: np.ndarray,
    rect: Rect,
    shape: tuple[int, int],
    codes: np.ndarray | None = None,
    n_codes: int = 1,
    steps: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(counts [h, w], colour code [h, w]) of the points `xy` [n, 2] inside `rect`, each
    cell's code from its points' (see cell_codes)."""
    h, w = shape
    cell, inside = cell_of(np.asarray(xy), rect, shape)
    counts = np.bincount(cell, minlength=h * w)
    c = None if codes is None else np.asarray(codes)[inside]
    return counts.reshape(h, w), cell_codes(cell, c, h * w, n_codes, steps).reshape(h, w)


def cell_codes(
    cell: np.ndarray, codes: np.ndarray | None, n_cells: int, n_codes: int, steps: int = 0
) -> np.ndarray:
    """The colour code of each of `n_cells` cells from its points' (`cell`: each point's):
    the most frequent code when the codes name categories (`steps` 0); for a colour scale of
    `steps` steps, the rounded mean of the points' steps, or when a cell has only points
    without a value (codes from `steps` on), the most frequent of those."""
    if codes is None or n_codes <= 1 or not n_cells:
        return np.zeros(n_cells, dtype=np.int64)
    c = np.asarray(codes, dtype=np.int64)
    code = np.bincount(cell * n_codes + c, minlength=n_cells * n_codes)
    code = code.reshape(n_cells, n_codes).argmax(axis=1)
    if steps:
        on_scale = c < steps
        valued = np.bincount(cell[on_scale], minlength=n_cells)
        total = np.bincount(cell[on_scale], weights=c[on_scale], minlength=n_cells)
        mean = np.rint(total / np.maximum(valued, 1)).astype(np.int64)
        code = np.where(valued > 0, mean, code)
    return code


def shade(counts: np.ndarray, code: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """Premultiplied RGBA [h, w, 4]: each non-empty cell in `palette[code]` (RGB rows), its
    opacity growing with the log of its count up to the crowded cells."""
    h, w = counts.shape
    how_many = np.bincount(counts.ravel())  # cells by count: the percentile without a sort
    how_many[0] = 0
    if not how_many.sum():
        return np.zeros((h, w, 4), dtype=np.uint8)
    share = np.cumsum(how_many) / how_many.sum()
    top = max(float(np.searchsorted(share, CROWDED_QUANTILE / 100)), 2.0)
    c = np.arange(len(how_many), dtype=np.float64)
    alpha = ALPHA_FEW + (ALPHA_MANY - ALPHA_FEW) * np.minimum(np.log1p(c) / np.log1p(top), 1.0)
    alpha[0] = 0.0
    # every (code, count) colour once, then one look-up per cell
    rgb = np.asarray(palette, dtype=np.float64).reshape(-1, 3)
    table = np.empty((len(rgb), len(alpha), 4), dtype=np.uint8)
    table[..., :3] = np.rint(rgb[:, None, :] * alpha[None, :, None])
    table[..., 3] = np.rint(alpha * 255)[None, :]
    flat = table.reshape(-1, 4).view(np.uint32)[:, 0]
    out = flat[code.ravel() * len(alpha) + counts.ravel()]
    return out.view(np.uint8).reshape(h, w, 4)


def tile_codes(
    level: Level, codes_in_order: np.ndarray | None, n_codes: int, steps: int = 0
) -> np.ndarray:
    """The colour code of each tile of `level` (see cell_codes); `codes_in_order` are the
    points' codes in the tiles' order."""
    t = len(level.counts)
    tile = np.repeat(np.arange(t, dtype=np.int64), level.counts)
    return cell_codes(tile, codes_in_order, t, n_codes, steps)


def tile_histogram(
    tiles: Tiles, level: int, rect: Rect, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, Rect]:
    """(counts [h, w], colour code [h, w], the map rectangle they cover) of the tiles of
    `level` that meet `rect`: a 2-D histogram of the points in view on the tiles' grid, at a
    cost that grows with the tiles in view, not with the points. `codes`: each tile's code."""
    lv = tiles.levels[level]
    hit = tiles.tiles_in(level, rect)
    if not len(hit):
        return np.zeros((0, 0), np.int64), np.zeros((0, 0), np.int64), rect
    ix, iy = lv.ix[hit], lv.iy[hit]
    cx0, cx1, cy0, cy1 = int(ix.min()), int(ix.max()), int(iy.min()), int(iy.max())
    h, w = cy1 - cy0 + 1, cx1 - cx0 + 1
    cell = (cy1 - iy) * w + (ix - cx0)  # row 0 at the top
    counts = np.zeros(h * w, dtype=np.int64)
    code = np.zeros(h * w, dtype=np.int64)
    counts[cell], code[cell] = lv.counts[hit], codes[hit]
    s, (ox, oy) = tiles.tile_side(level), tiles.origin
    extent = (ox + cx0 * s, oy + cy0 * s, ox + (cx1 + 1) * s, oy + (cy1 + 1) * s)
    return counts.reshape(h, w), code.reshape(h, w), extent


def splat(
    px: np.ndarray,
    codes: np.ndarray | None,
    palette: np.ndarray,
    shape: tuple[int, int],
    size: int,
    alpha: int = 220,
) -> np.ndarray:
    """Premultiplied RGBA [h, w, 4] with each point (pixel position `px` [n, 2], x right, y
    down) a `size` × `size` square in `palette[code]`, centred on it; later points on top."""
    h, w = shape
    size = max(int(size), 1)
    rgb = np.asarray(palette, dtype=np.float64).reshape(-1, 3)
    rgba = np.column_stack([np.rint(rgb * alpha / 255), np.full(len(rgb), alpha)])
    colour = rgba.astype(np.uint8).view(np.uint32)[:, 0]
    # a margin of `size` on every side: squares at the edges need no bounds checks
    big_w = w + 2 * size
    out = np.zeros(((h + 2 * size) * big_w), dtype=np.uint32)
    xy = np.floor(np.asarray(px, dtype=np.float64)) - size // 2 + size
    keep = (xy[:, 0] >= 0) & (xy[:, 0] < w + size) & (xy[:, 1] >= 0) & (xy[:, 1] < h + size)
    base = xy[keep, 1].astype(np.int64) * big_w + xy[keep, 0].astype(np.int64)
    c = colour[0] if codes is None else colour[np.asarray(codes)[keep]]
    for dy in range(size):
        for dx in range(size):
            out[base + (dy * big_w + dx)] = c
    picture = out.reshape(h + 2 * size, big_w)[size : size + h, size : size + w]
    return np.ascontiguousarray(picture).view(np.uint8).reshape(h, w, 4)


def over_white(rgba: np.ndarray) -> np.ndarray:
    """Premultiplied RGBA as opaque RGB on a white background."""
    a = rgba[..., 3:4].astype(np.int64)
    return (rgba[..., :3].astype(np.int64) + 255 - a).clip(0, 255).astype(np.uint8)
