"""The per-row pass: for every row, how far the other precision is from the reference."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.quant import kernels
from explorer.core.quant.precision import Precision
from explorer.core.search.exact import KERNEL_LOCK

# Stored bytes per block of the pass: enough to amortise a parallel launch, small enough that a
# cancel is noticed within a few milliseconds.
BLOCK_BYTES = 64 << 20


@dataclass
class RowDamage:
    """Per-row figures [rows] and per-dimension figures [dim] of `other` against `ref`."""

    stats: np.ndarray  # float64 [rows, kernels.COLUMNS]
    measured: np.ndarray  # bool [rows]: a token's row with a finite, nonzero reference
    dim_error: np.ndarray  # float64 [dim]: RMS error per dimension over the measured rows
    dim_scale: np.ndarray  # float64 [dim]: RMS reference value per dimension

    @property
    def rows(self) -> int:
        return int(self.stats.shape[0])

    def _ratio(self, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            value = top / bottom
        return np.where(self.measured, value, np.nan)

    @property
    def relative_error(self) -> np.ndarray:
        """‖q − r‖ / ‖r‖ per row (NaN where not measured)."""
        s = self.stats
        return np.sqrt(self._ratio(s[:, kernels.ERR_SQ], s[:, kernels.REF_SQ]))

    @property
    def cosine(self) -> np.ndarray:
        s = self.stats
        with np.errstate(all="ignore"):
            norms = np.sqrt(s[:, kernels.REF_SQ] * s[:, kernels.OTHER_SQ])
        return self._ratio(s[:, kernels.DOT], norms)

    @property
    def norm_ratio(self) -> np.ndarray:
        """‖q‖ / ‖r‖ per row."""
        s = self.stats
        return np.sqrt(self._ratio(s[:, kernels.OTHER_SQ], s[:, kernels.REF_SQ]))

    @property
    def max_abs_error(self) -> np.ndarray:
        return np.where(self.measured, self.stats[:, kernels.MAX_ABS], np.nan)

    @property
    def norm(self) -> np.ndarray:
        """‖r‖ per row."""
        return np.sqrt(self.stats[:, kernels.REF_SQ])


def block_rows(ref: Precision, other: Precision) -> int:
    row = ref.matrix[:1].nbytes + other.matrix[:1].nbytes
    return max(64, BLOCK_BYTES // max(1, row))


def row_damage(
    ref: Precision, other: Precision, used: np.ndarray, ctx: JobContext = NULL_CONTEXT
) -> RowDamage:
    """One pass over both matrices (row blocks, each row decoded exactly and compared in a
    buffer). `used`: bool [rows], the rows that hold a token."""
    rows, dim = ref.rows, ref.dim
    stats = np.empty((rows, kernels.COLUMNS), dtype=np.float64)
    parts = kernels.parts_for(min(rows, block_rows(ref, other)))
    dim_err = np.zeros((parts, dim), dtype=np.float64)
    dim_ref = np.zeros((parts, dim), dtype=np.float64)
    use = np.array(used[:rows], dtype=np.bool_)  # a writable copy: one compiled signature
    step = block_rows(ref, other)
    for start in range(0, rows, step):
        ctx.check("precision pass")
        stop = min(rows, start + step)
        r, rk = ref.raw_block(start, stop)
        q, qk = other.raw_block(start, stop)
        n = stop - start
        with KERNEL_LOCK:
            kernels.row_stats(
                r,
                rk,
                q,
                qk,
                dim,
                kernels.F16_TABLE,
                use[start:stop],
                stats[start:stop],
                dim_err,
                dim_ref,
                min(parts, n),
            )
        ctx.progress(stop / rows)
    ref_sq = stats[:, kernels.REF_SQ]
    measured = use & np.isfinite(ref_sq) & (ref_sq > 0) & np.isfinite(stats[:, kernels.ERR_SQ])
    # the kernel's per-dimension sums skipped non-finite rows but not zero ones: zero rows add 0
    count = max(1, int(np.count_nonzero(measured)))
    return RowDamage(
        stats,
        measured,
        np.sqrt(dim_err.sum(axis=0) / count),
        np.sqrt(dim_ref.sum(axis=0) / count),
    )
