"""The statistics as one figure (SVG): norm histogram, per-dimension std, token kinds."""

from __future__ import annotations

from explorer.core import svg
from explorer.core.analysis import charts
from explorer.core.analysis.kinds import KINDS
from explorer.core.analysis.stats import StatsResult


def stats_svg(result: StatsResult, subtitle: str, width: int = 1920, height: int = 1080) -> str:
    d = result.as_dict()
    hist = d["norms"]["histogram"]
    edges = hist["edges"]
    left = (40, 110, width / 2 - 70, height / 2 - 120)
    parts = charts.bars(
        left,
        hist["counts"],
        f"Row norms (median {d['norms']['median']:.3g})" if edges else "Row norms (none finite)",
        x_range=(edges[0], edges[-1]) if edges else None,
    )
    right = (width / 2 + 30, 110, width / 2 - 70, height / 2 - 120)
    outliers = d["dimensions"]["outliers"]
    parts += charts.bars(
        right,
        d["dimensions"]["std"],
        f"Std of each of {result.dim} dimensions ({len(outliers)} rogue, red)",
        x_range=(0, result.dim - 1),
        marked=outliers,
        unit="std",
    )
    counts = {k: v for k, v in d["kinds"].items() if k in KINDS}
    bottom = (40, height / 2 + 20, width - 80, height / 2 - 60)
    reasons: dict[str, int] = {}
    for s in result.suspicious:
        reasons[s.reason] = reasons.get(s.reason, 0) + 1
    shown = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in reasons.items()) or "none"
    parts += charts.bars(
        bottom,
        list(counts.values()),
        f"Tokens by kind (log scale) · suspicious tokens: {shown}",
        labels=[k.replace("_", " ") for k in counts],
        log=True,
    )
    title = f"Vocabulary statistics: {result.rows:,} rows × {result.dim}"
    return svg.document(width, height, charts.heading(title, subtitle) + parts)
