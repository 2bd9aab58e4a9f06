"""Writing SVG text without Qt: the document, text elements, colours, the width of a label.

The figures (the map, explorer/core/map/figure.py; the analysis charts,
explorer/core/analysis/charts.py) are built from these, written as they are for .svg and
rasterised for .png (explorer/render/raster.py).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from explorer.core.limits import display_text

FONT = "DejaVu Sans, Verdana, sans-serif"


def escape(s: str) -> str:
    """Text as SVG character data (what xml.sax.saxutils.escape does, without its imports)."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def colour(rgb: Iterable) -> str:
    """(r, g, b) in 0..255 → '#rrggbb'."""
    r, g, b = (int(c) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def char_em(ch: str) -> float:
    """Advance width of a character in em for DejaVu Sans, rounded up (so labels never collide)."""
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    if ch.islower() or ch in " .,:;'!|()[]-":
        return 0.62
    if ch.isupper() or ch.isdigit():
        return 0.74
    return 0.86


def text_width(text: str, size: float) -> float:
    return size * sum(char_em(c) for c in text)


def text(x: float, y: float, s: str, size: float = 14, anchor: str = "start", **attrs) -> str:
    """A `<text>` element; `attrs` are further attributes, `_` in a name written as `-`."""
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-family="{FONT}" font-size="{size:g}" '
        f'text-anchor="{anchor}"{extra}>{escape(s)}</text>'
    )


def document(width: int, height: int, body: Iterable[str]) -> str:
    """A whole SVG document of `width` × `height` pixels on white, safe to write as UTF-8 (a
    folder name that is not UTF-8 shows as U+FFFD)."""
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        *body,
        "</svg>",
    ]
    return display_text("\n".join(lines) + "\n")
