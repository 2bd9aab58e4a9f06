"""The statistics as CSV tables and as a short text summary (for the CLI)."""

from __future__ import annotations

import csv
import io

import numpy as np

from explorer.core.analysis.stats import StatsResult


def _num(x: float) -> str:
    return "" if not np.isfinite(x) else repr(float(x))


def tokens_csv(model, result: StatsResult) -> str:
    """One row per token: id, piece, text, norm, kind, word_start, cosine_to_unused, suspicious."""
    reasons = {s.id: s.reason for s in result.suspicious}
    names = result.kinds.names()
    cos = result.unused_cosine
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["id", "piece", "text", "norm", "kind", "word_start", "cosine_to_unused", "suspicious"]
    )
    tok = model.tokenizer
    for i in range(result.rows):
        piece = tok.piece(i) if tok is not None else None
        w.writerow(
            [
                i,
                "" if piece is None else piece,
                model.label(i),
                _num(result.norms[i]),
                names[i],
                int(result.kinds.word_start[i]),
                "" if cos is None else _num(cos[i]),
                reasons.get(i, ""),
            ]
        )
    return buf.getvalue()


def dimensions_csv(result: StatsResult) -> str:
    """One row per dimension: index, mean, std, robust z of log-std, outlier flag."""
    outliers = set(result.outliers)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["dimension", "mean", "std", "log_std_z", "outlier"])
    for j in range(result.dim):
        w.writerow(
            [
                j,
                _num(result.dim_mean[j]),
                _num(result.dim_std[j]),
                _num(result.dim_z[j]),
                int(j in outliers),
            ]
        )
    return buf.getvalue()


def summary_text(model, result: StatsResult, shown: int = 15) -> str:
    d = result.as_dict()
    n = d["norms"]
    lines = [
        f"{model.path.name}: {result.rows:,} rows × {result.dim} {model.dtype}"
        + ("  (cached)" if result.cached else ""),
    ]
    if n["min"] is not None:
        lines.append(
            f"row norms: min {n['min']:.4g}  median {n['median']:.4g}  mean {n['mean']:.4g}  "
            f"max {n['max']:.4g}"
        )
    std = result.dim_std
    lines.append(
        f"dimension std: median {np.nanmedian(std):.4g}, max {np.nanmax(std):.4g}; "
        f"rogue dimensions: {', '.join(map(str, result.outliers)) or 'none'}"
    )
    counts: dict[str, int] = {}
    for s in result.suspicious:
        counts[s.reason] = counts.get(s.reason, 0) + 1
    lines.append(
        "suspicious tokens: "
        + (", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items()) or "none")
    )
    small, large, near = result.norm_groups
    groups = [(small, "small norm"), (large, "large norm"), (near, "close to the unused rows")]
    if any(count for count, _ in groups):
        lines.append(
            "groups of rows alike (rare pieces; not listed): "
            + ", ".join(f"{count:,} {what}" for count, what in groups if count)
        )
    for s in result.suspicious[:shown]:
        score = "" if s.score is None else f"{s.score:.4g}"
        lines.append(f"  {s.id:>8}  {model.label(s.id)!s:<24} {s.reason:<12} {score}")
    if len(result.suspicious) > shown:
        lines.append(f"  … {len(result.suspicious) - shown} more (--json or --out FILE.csv)")
    kinds = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in d["kinds"].items())
    lines.append(f"tokens by kind: {kinds}")
    return "\n".join(lines) + "\n"
