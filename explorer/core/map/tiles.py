"""A quadtree of tiles over a map's points, built once per layout: which points lie in a
rectangle (for drawing), and which tokens name the part of the map in view (for labels).

The points are sorted along a Z-order (Morton) curve of a DEPTH-level grid over the map's
bounding square, so every tile of every level is one contiguous run of that order. Each tile
is named by its representative: the point of lowest `priority` in it (the caller's choice;
`token_priority` puts whole words first, then low ids). A tile's representative is also the
representative of one of its four children, so a label shown at one zoom stays when zooming in.
Each tile also keeps its next few points by priority, so that a caller who cannot show some
names (a window without a font for their script) names the tile by the first it can show; that
choice, too, stays with one of the tile's children.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

DEPTH = 12  # the finest tiles: 4096 × 4096 over the map
CANDIDATES = 4  # names kept per tile, best first
RANGES_ACROSS = 16  # positions_in looks at tiles about 1/16 of the rectangle wide

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in map coordinates


@dataclass(frozen=True)
class Level:
    """The non-empty tiles of one level, in Z-order."""

    ix: np.ndarray  # int64 column of each tile
    iy: np.ndarray  # int64 row of each tile (from the bottom)
    starts: np.ndarray  # int64 position in `Tiles.order` of each tile's first point
    counts: np.ndarray  # int64 points in each tile
    candidates: np.ndarray  # int32 [tiles, CANDIDATES]: its best points by priority (-1: none)

    @property
    def reps(self) -> np.ndarray:
        """Index of each tile's representative point."""
        return self.candidates[:, 0].astype(np.int64)


@dataclass(frozen=True)
class Tiles:
    origin: tuple[float, float]  # bottom-left corner of the bounding square
    side: float  # its side, in map units
    order: np.ndarray  # int64 point indices in Z-order (finite points only)
    xy: np.ndarray  # float32 [len(order), 2]: their coordinates, in that order
    position: np.ndarray  # int64 [n]: each point's place in `order` (-1: left out)
    levels: list[Level]  # levels[k]: 2**k × 2**k tiles

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    def tile_side(self, level: int) -> float:
        return self.side / (1 << level)

    def level_for(self, units_per_px: float, tile_px: float) -> int:
        """The coarsest level whose tiles are at most `tile_px` pixels across."""
        want = self.side / max(units_per_px * tile_px, 1e-300)
        return int(np.clip(np.ceil(np.log2(max(want, 1.0))), 0, self.depth))

    def tiles_in(self, level: int, rect: Rect) -> np.ndarray:
        """Indices into `levels[level]` of the tiles that meet `rect`."""
        lv = self.levels[level]
        (cx0, cy0), (cx1, cy1) = self._cells(level, rect)
        return np.flatnonzero((lv.ix >= cx0) & (lv.ix <= cx1) & (lv.iy >= cy0) & (lv.iy <= cy1))

    def count_in(self, rect: Rect) -> int:
        """Points in the tiles `positions_in` looks at (at least those inside `rect`)."""
        level = self._runs_level(rect)
        return int(self.levels[level].counts[self.tiles_in(level, rect)].sum())

    def _runs_level(self, rect: Rect) -> int:
        x0, y0, x1, y1 = rect
        span = max(x1 - x0, y1 - y0, 1e-300)
        return int(np.clip(np.floor(np.log2(self.side * RANGES_ACROSS / span)), 0, self.depth))

    def positions_in(self, rect: Rect) -> np.ndarray:
        """Positions in `order` (ascending) of the points of the tiles that meet `rect` (about
        RANGES_ACROSS of them across): every point inside it, and some near it."""
        level = self._runs_level(rect)
        lv = self.levels[level]
        hit = self.tiles_in(level, rect)
        return runs(lv.starts[hit], lv.counts[hit])

    def labels_in(
        self,
        rect: Rect,
        units_per_px: float,
        tile_px: float,
        usable: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> np.ndarray:
        """Names inside `rect` of the tiles that meet it, coarse levels first (within a level,
        fuller tiles first), each once: label candidates in order of priority, down to the
        level whose tiles are about `tile_px` pixels across. A tile's name is its first
        candidate that `usable` accepts (it maps point indices to a bool mask; default: every
        point); a tile with none is left unnamed."""
        chosen: list[np.ndarray] = []
        for level in range(self.level_for(units_per_px, tile_px) + 1):
            lv = self.levels[level]
            hit = self.tiles_in(level, rect)
            chosen.append(lv.candidates[hit[np.argsort(-lv.counts[hit], kind="stable")]])
        reps = first_usable(np.concatenate(chosen), usable)
        _, first = np.unique(reps, return_index=True)
        reps = reps[np.sort(first)]
        x0, y0, x1, y1 = rect
        p = self.xy[self.position[reps]]
        seen = (p[:, 0] >= x0) & (p[:, 0] <= x1) & (p[:, 1] >= y0) & (p[:, 1] <= y1)
        return reps[seen]

    def _cells(self, level: int, rect: Rect) -> tuple[tuple[int, int], tuple[int, int]]:
        x0, y0, x1, y1 = rect
        s, (ox, oy) = self.tile_side(level), self.origin
        last = (1 << level) - 1

        def cell(v: float, o: float) -> int:
            return int(np.clip(np.floor((v - o) / s), -1, last + 1))

        return (cell(x0, ox), cell(y0, oy)), (cell(x1, ox), cell(y1, oy))


def first_usable(
    candidates: np.ndarray, usable: Callable[[np.ndarray], np.ndarray] | None
) -> np.ndarray:
    """Per row of `candidates` (point indices, best first, -1: none), its first point that
    `usable` accepts; rows with none are left out. `usable` is asked about each point once."""
    if usable is None:
        return candidates[:, 0].astype(np.int64)
    points = np.unique(candidates[candidates >= 0]).astype(np.int64)
    accepted = np.zeros(len(points) + 1, dtype=bool)  # the last: the -1 padding
    accepted[:-1] = np.asarray(usable(points), dtype=bool)
    where = np.searchsorted(points, candidates)
    ok = accepted[np.where(candidates >= 0, where, len(points))]
    rows = np.flatnonzero(ok.any(axis=1))
    return candidates[rows, ok[rows].argmax(axis=1)].astype(np.int64)


def runs(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions start, start+1, ... of each run, concatenated (in the runs' order)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - counts), counts)
    return np.arange(total, dtype=np.int64) + shift


def _spread(v: np.ndarray) -> np.ndarray:
    """The bits of v (< 2**16) moved to the even bit positions."""
    v = v.astype(np.uint64) & np.uint64(0xFFFF)
    for shift, mask in ((8, 0x00FF00FF), (4, 0x0F0F0F0F), (2, 0x33333333), (1, 0x55555555)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


WORD_START = "␣"  # how a label shows a piece's leading space (core/tokenizer/text.py)
BYTE_PIECE = re.compile(r"(<0x[0-9A-Fa-f]{2}>)+")


def token_priority(ids: np.ndarray, labels: list[str]) -> np.ndarray:
    """Which token names a tile: whole words of three letters or digits or more, then other
    pieces with three or more, then those with one or two, then the rest (punctuation, byte
    pieces like <0xA3>); within each, the lowest id (tokenizers number their pieces roughly
    by frequency). A word starts with "␣" when any label does (byte-level BPE, SentencePiece),
    else wherever a label does not start with "##" (WordPiece, word lists)."""
    marked = any(label.startswith(WORD_START) for label in labels)

    def name_class(label: str) -> int:
        if BYTE_PIECE.fullmatch(label):
            return 3
        if marked:
            starts, word = label.startswith(WORD_START), label.removeprefix(WORD_START)
        else:
            starts, word = not label.startswith("##"), label.removeprefix("##")
        n = sum(map(str.isalnum, word))
        if n >= 3:
            return 0 if starts and word.isalnum() else 1
        return 2 if n else 3

    rank = np.fromiter(map(name_class, labels), dtype=np.int64, count=len(labels))
    ids = np.asarray(ids, dtype=np.int64)
    return rank * (int(ids.max(initial=0)) + 1) + ids


def build(coords: np.ndarray, priority: np.ndarray | None = None, depth: int = DEPTH) -> Tiles:
    """The tiles of `coords` [n, 2] (non-finite points left out); `priority`: lower names a
    tile first (default: the point's index)."""
    xy = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    finite = np.flatnonzero(np.isfinite(xy).all(axis=1))
    pts = xy[finite]
    if len(pts):
        lo, hi = pts.min(axis=0), pts.max(axis=0)
    else:
        lo, hi = np.zeros(2), np.ones(2)
    side = float(max(hi[0] - lo[0], hi[1] - lo[1], 1e-12)) * (1 + 1e-9)
    cells = 1 << depth
    grid = np.minimum(((pts - lo) / side * cells).astype(np.int64), cells - 1)
    code = _spread(grid[:, 0]) | (_spread(grid[:, 1]) << np.uint64(1))
    z = np.argsort(code, kind="stable")
    order, code, grid = finite[z], code[z], grid[z]
    prio = np.arange(len(xy)) if priority is None else np.asarray(priority)
    # the rank of each sorted point's priority: a tile's smallest ranks name it
    by_rank = np.argsort(prio[order], kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[by_rank] = np.arange(len(order))
    levels = []
    for level in range(depth + 1):
        key = code >> np.uint64(2 * (depth - level))
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0)
        starts = starts.astype(np.int64)
        counts = np.diff(np.r_[starts, len(key)]).astype(np.int64)
        cell = grid[starts] >> (depth - level)
        best = _best_ranked(rank, starts, counts, by_rank, order)
        levels.append(Level(cell[:, 0], cell[:, 1], starts, counts, best))
    position = np.full(len(xy), -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    sorted_xy = np.ascontiguousarray(xy[order], dtype=np.float32)
    return Tiles((float(lo[0]), float(lo[1])), side, order, sorted_xy, position, levels)


def _best_ranked(rank, starts, counts, by_rank, order) -> np.ndarray:
    """int32 [tiles, CANDIDATES]: the points of lowest rank in each run of `rank` (-1 where a
    run has fewer points), best first."""
    out = np.full((len(starts), CANDIDATES), -1, dtype=np.int32)
    if not len(starts):
        return out
    left = rank.copy()
    done = len(rank)  # marks a point already taken
    for j in range(min(CANDIDATES, int(counts.max()))):
        best = np.minimum.reduceat(left, starts)
        has = best < done
        out[has, j] = order[by_rank[best[has]]]
        left[by_rank[best[has]]] = done
    return out
