"""Sign codes of every row at both precisions, in one streamed pass over the two matrices.

The codes are the fast index's (core/search/codes.py): each unit row split along the reference's
mean direction, the rest randomly rotated (random signs, then a Walsh–Hadamard transform) and
kept as sign bits. Approximate neighbour drift ranks candidates by them; each precision gets its
own codes, so a row that quantisation moved far is found where it now lies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.kernel_lock import KERNEL_LOCK
from explorer.core.quant import kernels
from explorer.core.quant.precision import Precision
from explorer.core.search import codes as search_codes

BITS = 4096  # at least: one rotation of a 4096-wide row, four of a 1024-wide one
MEAN_SAMPLE = 8192  # rows the mean direction is taken from
BLOCK_VALUES = 1 << 22  # decoded values per block (16 MB of float32)


@dataclass
class Sketch:
    """One precision's codes and what the estimates need besides them."""

    codes: np.ndarray  # uint64 [rows, words]
    a: np.ndarray  # float32 [rows]: cosine of each unit row with the mean direction
    wn: np.ndarray  # float32 [rows]: length of the rest of each unit row
    sq: np.ndarray  # float64 [rows]: squared norms (not finite: the row holds NaN/inf)

    def __post_init__(self) -> None:
        self._heads: dict[int, np.ndarray] = {}

    def head(self, words: int) -> np.ndarray:
        """The first `words` of every code, contiguous (what the coarse scan reads)."""
        if words not in self._heads:
            self._heads[words] = np.ascontiguousarray(self.codes[:, :words])
        return self._heads[words]

    @property
    def finite(self) -> np.ndarray:
        """bool [rows]: rows with a finite, nonzero norm."""
        return np.isfinite(self.sq) & (self.sq > 0)

    def factors(self, metric: str) -> np.ndarray:
        """float32 [rows]: what a row's dot product with a query is multiplied by to give its
        score: 1/|row| for cosine, 1 for dot; 0 for zero and non-finite rows (which score 0,
        as in the exact scan)."""
        ok = self.finite
        if metric == "dot":
            return ok.astype(np.float32)
        root = np.sqrt(np.where(ok, self.sq, 1.0))
        return np.divide(1.0, root, where=ok, out=np.zeros(len(ok))).astype(np.float32)

    def norms(self) -> np.ndarray:
        """float32 [rows]: |row|, 0 for zero and non-finite rows."""
        return np.sqrt(np.where(self.finite, self.sq, 0.0)).astype(np.float32)


@dataclass
class Rotation:
    u: np.ndarray  # float32 [dim]: unit mean direction of the reference's unit rows
    signs: np.ndarray  # float32 [R, D]: the random rotations

    @property
    def words(self) -> int:
        return self.signs.size // 64

    def query_code(self, vector: np.ndarray) -> search_codes.QueryCode:
        return search_codes.query_code(np.asarray(vector, np.float32), self.u, self.signs)


def rotation(ref: Precision, measured: np.ndarray, seed: int = 0) -> Rotation:
    """The mean direction of a sample of the measured reference rows, and the rotations."""
    pool = np.flatnonzero(measured)
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(pool, min(len(pool), MEAN_SAMPLE), replace=False))
    total = np.zeros(ref.dim, np.float64)
    step = max(1, BLOCK_VALUES // max(1, ref.dim))
    for start in range(0, len(ids), step):
        with KERNEL_LOCK:
            rows = ref.decode_ids(ids[start : start + step])
        norms = np.linalg.norm(rows, axis=1)
        ok = np.isfinite(norms) & (norms > 0)
        total += (rows[ok] / norms[ok, None]).sum(0, dtype=np.float64)
    length = np.linalg.norm(total)
    u = (total / length if length > 0 else total).astype(np.float32)
    return Rotation(u, search_codes.rotation_signs(ref.dim, BITS, seed=1))


def _empty(rows: int, words: int) -> Sketch:
    return Sketch(
        np.empty((rows, words), np.uint64),
        np.empty(rows, np.float32),
        np.empty(rows, np.float32),
        np.empty(rows, np.float64),
    )


def sketch_pair(
    ref: Precision, other: Precision, rot: Rotation, ctx: JobContext = NULL_CONTEXT
) -> tuple[Sketch, Sketch]:
    """Codes of every row of both matrices, block by block (one decoded block at a time)."""
    rows, dim = ref.rows, ref.dim
    out = (_empty(rows, rot.words), _empty(rows, rot.words))
    step = max(64, BLOCK_VALUES // max(1, dim))
    buf = np.empty((min(step, rows), dim), np.float32)  # one buffer for every block
    for start in range(0, rows, step):
        ctx.check("neighbour drift")
        stop = min(rows, start + step)
        block = slice(start, stop)
        for p, s in zip((ref, other), out, strict=True):
            raw, kind = p.raw_block(start, stop)
            x = buf[: stop - start]
            with KERNEL_LOCK:
                kernels.decode_rows(raw, kind, dim, kernels.F16_TABLE, x, kernels.parts_for(len(x)))
                search_codes.encode_rows(
                    x, rot.u, rot.signs, s.codes[block], s.a[block], s.wn[block], s.sq[block]
                )
        ctx.progress(stop / rows)
    return out
