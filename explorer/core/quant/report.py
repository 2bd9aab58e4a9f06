"""What one precision does to a model's embedding, against a reference: the per-row pass,
neighbour drift on a sample, and the summary the CLI prints and the Compare tab shows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.quant import kernels
from explorer.core.quant.align import check_aligned
from explorer.core.quant.damage import RowDamage, row_damage
from explorer.core.quant.drift import DEPTH, SAMPLE, Drift, neighbour_drifts, sample_ids
from explorer.core.quant.precision import Precision, of_model, simulate

WORST = 20
WORST_DIMENSIONS = 5  # dimensions with the largest RMS error, in the JSON


@dataclass
class QuantReport:
    ref: Precision
    other: Precision
    damage: RowDamage
    drift: Drift | None  # by cosine
    dot_drift: Drift | None = None  # by dot product, when asked for

    @property
    def type_name(self) -> str:
        return self.other.type_name

    def worst(self, count: int = WORST) -> np.ndarray:
        """Ids of the measured rows with the largest relative error, worst first (rows that
        did not change at all are not damaged, and not listed)."""
        rel = self.damage.relative_error
        ids = np.flatnonzero(self.damage.measured & (self.damage.stats[:, kernels.ERR_SQ] > 0))
        order = np.lexsort((ids, -rel[ids]))
        return ids[order[:count]]

    def summary(self) -> dict:
        rel = self.damage.relative_error[self.damage.measured]
        cos = self.damage.cosine[self.damage.measured]

        def stat(values: np.ndarray, fn) -> float | None:
            return float(fn(values)) if len(values) else None

        overlap = self.drift.overlap if self.drift is not None else np.zeros(0)
        return {
            "type": self.type_name,
            "reference": self.ref.label,
            "other": self.other.label,
            "simulated": self.other.simulated,
            "rows": int(len(rel)),
            "relative_error": {
                "median": stat(rel, np.median),
                "p99": stat(rel, lambda v: np.quantile(v, 0.99)),
                "max": stat(rel, np.max),
            },
            "cosine": {"median": stat(cos, np.median), "min": stat(cos, np.min)},
            "top10_overlap": {
                "mean": stat(overlap / self.drift.k, np.mean) if self.drift else None,
                "sample": int(len(overlap)),
                "method": self.drift.method if self.drift else None,
            },
            **(
                {
                    "top10_overlap_dot": {
                        "mean": stat(self.dot_drift.overlap / self.dot_drift.k, np.mean),
                        "sample": int(len(self.dot_drift.ids)),
                        "method": self.dot_drift.method,
                    }
                }
                if self.dot_drift is not None
                else {}
            ),
            "rank_displacement": {
                "mean": stat(self.drift.displacement, np.mean) if self.drift else None,
                "depth": DEPTH,
            },
        }

    def as_dict(self, piece=lambda i: None) -> dict:
        """The summary and the WORST most damaged rows; `piece(id)` gives a row's piece."""
        rel = self.damage.relative_error
        out = self.summary()
        out["worst"] = [
            {"id": int(i), "piece": piece(int(i)), "relative_error": float(rel[i])}
            for i in self.worst()
        ]
        d = self.damage
        order = np.argsort(-d.dim_error, kind="stable")[:WORST_DIMENSIONS]
        out["dimensions"] = [
            {"dim": int(j), "rms_error": float(d.dim_error[j]), "rms_value": float(d.dim_scale[j])}
            for j in order
        ]
        return out


def measure(
    ref: Precision,
    other: Precision,
    used: np.ndarray,
    sample: int = SAMPLE,
    ctx: JobContext = NULL_CONTEXT,
    dot: bool = False,
) -> QuantReport:
    """The per-row pass over all rows, then neighbour drift on `sample` rows (0: none), by
    cosine and, with `dot`, by dot product too."""
    damage = row_damage(ref, other, used, ctx.part(0.0, 0.3 if sample else 1.0, "per row"))
    if not sample:
        return QuantReport(ref, other, damage, None)
    ids = sample_ids(damage.measured, sample)
    metrics = ("cosine", "dot") if dot else ("cosine",)
    part = ctx.part(0.3, 0.7, "neighbours")
    drifts = neighbour_drifts(ref, other, ids, damage.measured, metrics, part)
    return QuantReport(ref, other, damage, drifts["cosine"], drifts.get("dot"))


def compare_files(
    ref_model,
    other_model,
    sample: int = SAMPLE,
    ctx: JobContext = NULL_CONTEXT,
    dot: bool = False,
) -> QuantReport:
    """One embedding in two files (e.g. BF16 safetensors and the Q4_0 GGUF made from it)."""
    check_aligned(ref_model, other_model)
    ref, other = of_model(ref_model), of_model(other_model)
    return measure(ref, other, ref_model.used_rows, sample, ctx, dot)


def compare_simulated(
    model, type_names, sample: int = SAMPLE, ctx: JobContext = NULL_CONTEXT, dot: bool = False
) -> list[QuantReport]:
    """What quantising the model's embedding to each type would do (nothing is written)."""
    ref = of_model(model)
    out = []
    width = 1.0 / max(1, len(type_names))
    for n, name in enumerate(type_names):
        part = ctx.part(n * width, width, name)
        other = simulate(ref, name, part.part(0.0, 0.4, f"quantising to {name}"))
        out.append(measure(ref, other, model.used_rows, sample, part.part(0.4, 0.6, name), dot))
    return out
