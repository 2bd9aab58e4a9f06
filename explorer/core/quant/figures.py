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


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two samples (NaN when either is constant)."""
    ra = np.argsort(np.argsort(a, kind="stable"), kind="stable").astype(np.float64)
    rb = np.argsort(np.argsort(b, kind="stable"), kind="stable").astype(np.float64)
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def block_peakiness(rows: np.ndarray, block: int = 32) -> np.ndarray:
    """Per row, the mean over its blocks of `block` values of the block's largest |value| over
    its RMS: 1 for a flat block, up to √block for one value among zeros."""
    dim = rows.shape[1] - rows.shape[1] % block
    b = np.abs(rows[:, :dim].astype(np.float64)).reshape(len(rows), -1, block)
    with np.errstate(all="ignore"):
        ratio = b.max(axis=2) / np.sqrt((b * b).mean(axis=2))
    return np.nanmean(np.where(np.isfinite(ratio), ratio, np.nan), axis=1)


def size_and_shape(report: QuantReport) -> tuple[float, float, float, float] | None:
    """On the drift sample (or all measured rows when there is none): the rank correlation of
    the relative error with the row norm and with block peakiness, and the median error of the
    tenth of rows with the smallest norm and of the rest."""
    d = report.damage
    ids = report.drift.ids if report.drift is not None else np.flatnonzero(d.measured)
    ids = ids[d.measured[ids]]
    if len(ids) < 20:
        return None
    rel, norm = d.relative_error[ids], d.norm[ids]
    peaks = block_peakiness(report.ref.decode_ids(ids))
    ok = np.isfinite(peaks)
    cut = np.quantile(norm, 0.1)
    return (
        rank_correlation(norm, rel),
        rank_correlation(peaks[ok], rel[ok]),
        float(np.median(rel[norm <= cut])),
        float(np.median(rel[norm > cut])),
    )


def _distinct(top: np.ndarray, k: int) -> int:
    return int(len(np.unique(top[:, :k])))


def _relative_gap(drift) -> float:
    """Median of (k-th score − (k+1)-th score) / |k-th score| at the reference precision."""
    s = drift.ref_scores
    if s.shape[1] <= drift.k:
        return float("nan")
    with np.errstate(all="ignore"):
        gap = (s[:, drift.k - 1] - s[:, drift.k]) / np.abs(s[:, drift.k - 1])
    return float(np.nanmedian(gap[np.isfinite(gap)])) if np.isfinite(gap).any() else float("nan")


def neighbours_by_metric(report: QuantReport) -> str | None:
    """Cosine against dot-product neighbour lists: which keep more, and what the lists show."""
    cos, dot = report.drift, report.dot_drift
    if cos is None or dot is None or not len(cos.ids):
        return None
    kc, kd = float(cos.overlap.mean()), float(dot.overlap.mean())
    n, k = len(cos.ids), cos.k
    uc, ud = _distinct(cos.ref_top, k), _distinct(dot.ref_top, k)
    gc, gd = _relative_gap(cos), _relative_gap(dot)
    if abs(kc - kd) < 0.05:
        verdict = "both keep about as many"
    elif kd > kc:
        verdict = "dot-product lists survive better"
    else:
        verdict = "cosine lists survive better"
    hubs = (
        "dot product keeps coming back to the same rows of large norm, whatever the query"
        if ud < 0.5 * uc
        else "the two kinds of list are about as varied"
    )
    return (
        f"Cosine or dot product: {kc:.1f} of {k} cosine neighbours stay, {kd:.1f} of {k} "
        f"dot-product ones: {verdict}. The {n:,} sampled tokens' dot-product top {k} name "
        f"{ud:,} different tokens, their cosine top {k} {uc:,}: {hubs}. The {k}th neighbour "
        f"leads the next by a median {gd:.1%} of its score by dot product, {gc:.1%} by "
        "cosine; a wider lead takes a larger error to overturn."
    )


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
    figures = size_and_shape(report)
    if figures is not None:
        by_norm, by_shape, small, rest = figures
        if small > 1.1 * rest:
            verdict = "rows of small norm lose more"
        elif small < rest / 1.1:
            verdict = "here rows of small norm lose less"
        else:
            verdict = "a row's size alone changes little"
        why = (
            "A block's scale follows its own largest value, so scaling a row up or down leaves "
            "its relative error as it was; what costs is a block where one value stands far "
            "above the others. Rank correlation of the error with the blocks' peak / RMS: "
            f"ρ = {by_shape:+.2f}; with the row norm: ρ = {by_norm:+.2f}."
            if name in BLOCK_SCALES
            else "Each value keeps its own exponent, so only values too small for the format "
            f"lose more (rank correlation of the error with the row norm: ρ = {by_norm:+.2f})."
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
    metrics = neighbours_by_metric(report)
    if metrics is not None:
        out.append(metrics)
    return out
