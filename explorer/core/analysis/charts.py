"""Small SVG chart panels (bars with axes and a title) for the analysis figures, Qt-free.

The CLI writes the SVG as is and rasterises the same text for PNG (as `project` does)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.core.svg import text

BAR = "#4e79a7"
MARK = "#d62728"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def bars(
    box: tuple[float, float, float, float],
    heights: Sequence[float],
    title: str,
    x_range: tuple[float, float] | None = None,
    labels: Sequence[str] | None = None,
    marked: Sequence[int] = (),
    log: bool = False,
    unit: str = "count",
) -> list[str]:
    """Vertical bars in box (x, y, w, h): a histogram (x_range gives the axis) or labelled bars."""
    x, y, w, h = box
    out = [text(x, y + 18, title, 18, font_weight="bold")]
    top, bottom = y + 34, y + h - (70 if labels else 28)
    values = np.nan_to_num(np.asarray(heights, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    shown = np.log10(1 + np.maximum(values, 0)) if log else np.maximum(values, 0)
    peak = float(shown.max()) if values.size and shown.max() > 0 else 1.0
    out.append(f'<line x1="{x}" y1="{bottom}" x2="{x + w}" y2="{bottom}" stroke="#333"/>')
    n = max(1, len(values))
    step = w / n
    marked_set = set(marked)
    for i, v in enumerate(shown.tolist()):
        bh = (bottom - top) * v / peak
        colour = MARK if i in marked_set else BAR
        out.append(
            f'<rect x="{x + i * step:.2f}" y="{bottom - bh:.2f}" '
            f'width="{max(step * 0.9, 0.5):.2f}" height="{bh:.2f}" fill="{colour}"/>'
        )
        if labels is not None:
            cx = x + (i + 0.45) * step
            out.append(text(cx, bottom - bh - 6, f"{values[i]:,.0f}", 12, "middle"))
            out.append(
                text(
                    cx,
                    bottom + 8,
                    labels[i],
                    12,
                    "end",
                    transform=f"rotate(-45 {cx:.1f} {bottom + 8:.1f})",
                )
            )
    if x_range is not None:
        out.append(text(x, bottom + 18, _fmt(x_range[0]), 12))
        out.append(text(x + w, bottom + 18, _fmt(x_range[1]), 12, "end"))
    scale = f"log {unit}" if log else unit
    out.append(
        text(
            x + w,
            top - 4,
            f"max {_fmt(float(values.max()) if values.size else 0)} ({scale})",
            12,
            "end",
            fill="#555",
        )
    )
    return out


def heading(title: str, subtitle: str) -> list[str]:
    """The figure's title and the line under it."""
    return [text(40, 48, title, 30, font_weight="bold"), text(40, 78, subtitle, 16, fill="#555")]
