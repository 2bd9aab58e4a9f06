"""What the precision view shows besides the summary: the error distribution, the most damaged
rows, and captions whose figures come from the measurement itself."""

from __future__ import annotations

import numpy as np

from explorer.core.quant import kernels
from explorer.core.quant.report import QuantReport
from explorer.core.quant.types import bits_per_value

BINS = 60

BLOCK_SCALES = {
    "Q8_0": "32 values share one f16 scale (their largest magnitude / 127) and each keeps a "
    "signed 8-bit multiple of it",
    "Q5_0": "32 values share one f16 scale and each keeps a 5-bit multiple of it (−16…15)",
    "Q4_0": "32 values share one f16 scale and each keeps a 4-bit multiple of it (−8…7)",
    "Q5_1": "32 values share an f16 scale and an f16 minimum; each keeps a 5-bit step above the "
    "minimum",
    "Q4_1": "32 values share an f16 scale and an f16 minimum; each keeps a 4-bit step above the "
    "minimum",
    "MXFP4": "32 values share one power-of-two scale and each keeps a 4-bit float",
}


def error_histogram(report: QuantReport, bins: int = BINS) -> tuple[np.ndarray, np.ndarray]:
    """Edges [bins + 1] and counts [bins] of the relative error over the measured rows."""
    rel = report.damage.relative_error[report.damage.measured]
    lo, hi = (float(rel.min()), float(rel.max())) if len(rel) else (0.0, 1.0)
    counts, edges = np.histogram(rel, bins=bins, range=(lo, hi if hi > lo else lo + 1.0))
    return edges, counts


def norm_effect(report: QuantReport) -> tuple[float, float] | None:
    """Median relative error of the tenth of rows with the smallest norm, and of the rest."""
    d = report.damage
    ids = np.flatnonzero(d.measured)
    if len(ids) < 20:
        return None
    rel, norm = d.relative_error[ids], d.norm[ids]
    cut = np.quantile(norm, 0.1)
    return float(np.median(rel[norm <= cut])), float(np.median(rel[norm > cut]))


def captions(report: QuantReport) -> list[str]:
    """Short explanations with this model's figures: the block scale, small rows, neighbours."""
    name = report.type_name
    out = []
    if not np.any(report.damage.stats[report.damage.measured, kernels.ERR_SQ] > 0):
        return [
            f"Every value survives {name}: the reference already holds only values that "
            f"{name} stores exactly (as when a {name} file is quantised to {name} again)."
        ]
    if name in BLOCK_SCALES:
        out.append(
            f"{name} ({bits_per_value(name):.1f} bits a value): {BLOCK_SCALES[name]}. A value "
            "is off by up to half a step, and one large value in a block makes the steps of "
            "its 31 neighbours coarse."
        )
    else:
        out.append(
            f"{name} rounds each value to a float with fewer mantissa bits: every value keeps "
            "about the same relative precision, whatever its neighbours."
        )
    effect = norm_effect(report)
    if effect is not None:
        small, rest = effect
        if small > 1.2 * rest:
            verdict = "rows of small norm lose more"
        elif small < rest / 1.2:
            verdict = "here rows of small norm lose less"
        else:
            verdict = "a row's size alone changes little"
        why = (
            "The scale follows each block's own values, so what costs is a row whose blocks "
            "hold one large value among small ones (and, for tiny rows, scales that f16 "
            "cannot hold)."
            if name in BLOCK_SCALES
            else "Each value keeps its own exponent, so only values too small for the format "
            "lose more."
        )
        out.append(
            f"Smallest tenth of rows by norm: median error {small:.4f}, the rest {rest:.4f}: "
            f"{verdict}. {why}"
        )
    drift = report.drift
    if drift is not None and len(drift.ids):
        cos = report.damage.cosine[report.damage.measured]
        kept = float(drift.overlap.mean())
        gap = float(np.nanmedian(drift.gap)) if len(drift.gap) else float("nan")
        moved = float(np.median(1 - cos)) if len(cos) else float("nan")
        out.append(
            f"Neighbours: on average {kept:.1f} of each sampled token's {drift.k} nearest "
            f"(cosine) stay the same. A row turns by little (median 1 − cosine to its original "
            f"{moved:.2g}), but its {drift.k}th and {drift.k + 1}th neighbours are typically "
            f"only {gap:.2g} apart in cosine, so "
            + (
                "errors this small leave the lists as they were."
                if kept >= drift.k - 0.05
                else "small errors reorder the tail of the list."
            )
        )
    return out
