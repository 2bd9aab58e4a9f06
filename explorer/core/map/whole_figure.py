"""The figure of a map of very many points (the whole vocabulary) as SVG text, without Qt.

A quarter of a million circles would make an SVG of tens of megabytes that takes long to draw;
here the points are one embedded PNG image instead: a density image of the plot box (each cell
a pixel or two across, in its points' dominant colour, more opaque where they crowd,
explorer/core/map/density.py). The labels name the tiles of the map's quadtree
(explorer/core/map/tiles.py), as in the window, placed so that they never overlap. The CLI
writes this for `project --all --out map.svg|png`, the window for its 4K export.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from explorer.core import svg
from explorer.core.map import density, figure, tiles

CELL_PX = 2  # the density image's cells, in figure pixels
LABEL_TILE_PX = 150  # labels name tiles down to about this many pixels across
LABEL_SIZE = 17.0


def png_bytes(rgba: np.ndarray) -> bytes:
    """An RGBA uint8 [h, w, 4] array (straight alpha) as PNG file bytes."""
    h, w = rgba.shape[:2]
    raw = np.zeros((h, 1 + 4 * w), dtype=np.uint8)  # each row: filter type 0, then pixels
    raw[:, 1:] = np.ascontiguousarray(rgba, dtype=np.uint8).reshape(h, 4 * w)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def _straight(premultiplied: np.ndarray) -> np.ndarray:
    """Premultiplied RGBA as straight (PNG) RGBA."""
    out = premultiplied.copy()
    a = premultiplied[..., 3:4].astype(np.float64)
    rgb = premultiplied[..., :3] * 255.0 / np.maximum(a, 1)
    out[..., :3] = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    return out


def whole_map_svg(
    coords: np.ndarray,
    labels: Sequence[str],
    quadtree: tiles.Tiles,
    *,
    title: str,
    subtitle: str = "",
    codes: np.ndarray | None = None,
    palette: np.ndarray | None = None,
    steps: int = 0,
    legend: Sequence[tuple[tuple[int, ...], str]] = (),
    legend_title: str = "",
    view: tiles.Rect | None = None,
    width: int = 1920,
    height: int = 1080,
    max_labels: int | None = None,
    usable: Callable[[np.ndarray], np.ndarray] | None = None,
) -> str:
    """The figure, `width` × `height` pixels: the points of `view` (x0, y0, x1, y1 in map
    units; default: every point) as a density image coloured by `codes` (indices into
    `palette`, RGB rows, the first `steps` of them a colour scale; one colour without codes),
    labels naming the tiles in view (each by its first candidate `usable` accepts: see
    tiles.Tiles.labels_in), and a `legend` of (rgb, name) entries at the right."""
    xy = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    keyed = bool(legend)
    k = max(1.0, min(width / 1920, height / 1080))  # type and margins grow with a 4K figure
    left, right = 50.0 * k, (260.0 if keyed else 50.0) * k
    top, bottom = (120.0 if subtitle else 90.0) * k, 40.0 * k
    label_size = LABEL_SIZE * k
    pw, ph = width - left - right, height - top - bottom
    rect = _fit(view or _bounds(quadtree), pw, ph)
    x0, y0, x1, y1 = rect
    per_px = (x1 - x0) / pw
    colours = np.array([figure.DEFAULT_POINT]) if palette is None else np.asarray(palette)
    shape = (max(int(ph // CELL_PX), 1), max(int(pw // CELL_PX), 1))
    counts, code = density.histogram(
        xy, rect, shape, codes, len(colours) if codes is not None else 1, steps
    )
    picture = png_bytes(_straight(density.shade(counts, code, colours)))

    reps = quadtree.labels_in(rect, per_px, LABEL_TILE_PX * k, usable)
    px = left + (xy[reps, 0] - x0) / per_px
    py = top + (y1 - xy[reps, 1]) / per_px
    cap = max_labels or int(min(160, max(20, pw * ph / (30000 * k * k))))
    placed = figure.place_labels(
        px,
        py,
        [labels[int(i)] for i in reps],
        range(len(reps)),
        lambda s: svg.text_width(s, label_size) + 8 * k,
        label_size * 1.3,
        (left + 2, top + 2, left + pw - 2, top + ph - 2),
        cap,
    )
    out = [svg.text(left, 58 * k, title, 34 * k, fill="#222222", font_weight="bold")]
    if subtitle:
        out.append(svg.text(left, 92 * k, subtitle, 20 * k, fill="#555555"))
    out.append(
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{pw:.1f}" height="{ph:.1f}" fill="none" '
        f'stroke="#dddddd" stroke-width="1"/>'
    )
    data = base64.b64encode(picture).decode("ascii")
    out.append(
        f'<image xmlns:xlink="http://www.w3.org/1999/xlink" x="{left:.1f}" y="{top:.1f}" '
        f'width="{pw:.1f}" height="{ph:.1f}" preserveAspectRatio="none" '
        f'style="image-rendering:pixelated" xlink:href="data:image/png;base64,{data}"/>'
    )
    out += figure._labels_svg(placed, [labels[int(i)] for i in reps], set(), label_size)
    if keyed:
        out += _legend(width - right + 30 * k, top + 30 * k, legend_title, legend, k)
    return svg.document(width, height, out)


def _bounds(quadtree: tiles.Tiles) -> tiles.Rect:
    if not len(quadtree.xy):
        return (0.0, 0.0, 1.0, 1.0)
    lo, hi = quadtree.xy.min(axis=0), quadtree.xy.max(axis=0)
    pad = (hi - lo) * 0.02 + 1e-9
    (x0, y0), (x1, y1) = (lo - pad).tolist(), (hi + pad).tolist()
    return (x0, y0, x1, y1)


def _fit(rect: tiles.Rect, pw: float, ph: float) -> tiles.Rect:
    """`rect` widened on one axis to the plot box's shape (equal scale on both axes)."""
    x0, y0, x1, y1 = rect
    w, h = max(x1 - x0, 1e-12), max(y1 - y0, 1e-12)
    if w / h < pw / ph:
        grow = (h * pw / ph - w) / 2
        return (x0 - grow, y0, x1 + grow, y1)
    grow = (w * ph / pw - h) / 2
    return (x0, y0 - grow, x1, y1 + grow)


def _legend(x: float, y: float, title: str, entries, k: float) -> list[str]:
    """Swatches and names, `k` times the size of a 1920 × 1080 figure's."""
    out = [svg.text(x, y - 10 * k, title, 18 * k, fill="#333333")] if title else []
    step = min(28.0, 700.0 / max(len(entries), 1)) * k
    for n, (rgb, name) in enumerate(entries):
        cy = y + 16 * k + step * n
        swatch = f'cx="{x + 9 * k:.1f}" cy="{cy:.1f}" r="{7 * k:.1f}"'
        out += [
            f'<circle {swatch} fill="{svg.colour(rgb)}"/>',
            svg.text(x + 26 * k, cy + 6 * k, name, 16 * k, fill="#333333"),
        ]
    return out
