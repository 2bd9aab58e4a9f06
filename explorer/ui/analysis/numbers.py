"""Numbers as a teacher would say them: 23.4 million, 0.21 s (sizes: explorer.core.units)."""

from __future__ import annotations

import math


def human_count(n: float) -> str:
    """1,234 / 12.3 thousand / 4.5 million / 2.0 billion."""
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(n) >= size:
            return f"{n / size:,.1f} {word}"
    return f"{n:,.0f}"


def human_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "–"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-2:
        return f"{s * 1e3:.0f} ms"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


def ratio(a: float, b: float) -> str:
    """'about 12,000×' (b == 0 → '∞')."""
    if b <= 0:
        return "∞"
    return f"about {a / b:,.0f}×"
