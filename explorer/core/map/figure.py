"""A finished map figure as SVG text, without Qt: title, points, non-overlapping labels, colour bar.

The CLI and the window write this SVG as is, and rasterise the same SVG for PNG output
(explorer/render/raster.py), so both files show the same figure. The label placement and the
colour maps are shared with the interactive map (explorer/ui/map/view.py).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import numpy as np

from explorer.core import svg

if TYPE_CHECKING:
    from explorer.core.map.neighborhood import Neighborhood

P = ParamSpec("P")
R = TypeVar("R")

# matplotlib's viridis at 9 stops: perceptually even and readable in grey
_VIRIDIS = np.array(
    [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ],
    dtype=np.float64,
)
# Tableau 10: distinct categorical colours for clusters
CATEGORICAL = [
    (78, 121, 167),
    (242, 142, 43),
    (225, 87, 89),
    (118, 183, 178),
    (89, 161, 79),
    (237, 201, 72),
    (176, 122, 161),
    (255, 157, 167),
    (156, 117, 95),
    (186, 176, 172),
]
HIGHLIGHT = (214, 39, 40)
DEFAULT_POINT = (70, 110, 160)


def viridis(t: np.ndarray) -> np.ndarray:
    """Values in 0..1 → RGB uint8 [n, 3]; NaN becomes grey."""
    t = np.asarray(t, dtype=np.float64)
    pos = np.clip(np.nan_to_num(t, nan=0.0), 0, 1) * (len(_VIRIDIS) - 1)
    lo = np.floor(pos).astype(int).clip(0, len(_VIRIDIS) - 2)
    frac = (pos - lo)[..., None]
    rgb = _VIRIDIS[lo] * (1 - frac) + _VIRIDIS[lo + 1] * frac
    rgb[np.isnan(t)] = (160, 160, 160)
    return rgb.round().astype(np.uint8)


@dataclass(frozen=True)
class PlacedLabel:
    index: int  # which point
    x: float  # left edge of the text box
    y: float  # top edge of the text box
    w: float
    h: float
    leader: bool = False  # moved away from a crowded point: draw a line from it to the box


COLOUR_STOPS = 9  # knots of the figure's rank colour scale

# a callout's distances from its point, in label heights, and its directions (x, y), nearest first
CALLOUT_RADII = (1.6, 2.6, 3.8, 5.2)
CALLOUT_DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (-1, -1), (1, 1), (-1, 1))


def _beside(x: float, y: float, w: float, h: float, r: float) -> list[tuple[float, float]]:
    """Top-left corners of a w × h box `r` from (x, y): right, left, above, below."""
    return [(x + r, y - h / 2), (x - r - w, y - h / 2), (x - w / 2, y - r - h), (x - w / 2, y + r)]


def _callouts(x: float, y: float, w: float, h: float) -> list[tuple[float, float]]:
    """Top-left corners of a w × h box farther out around (x, y), in rings."""
    corners = []
    for radius in CALLOUT_RADII:
        r = radius * h
        for dx, dy in CALLOUT_DIRECTIONS:
            cx = x + dx * r - (w if dx < 0 else w / 2 if dx == 0 else 0)
            cy = y + dy * r - (h if dy < 0 else h / 2 if dy == 0 else 0)
            corners.append((cx, cy))
    return corners


def placing_labels(
    px: np.ndarray,
    py: np.ndarray,
    texts: Sequence[str],
    order: Sequence[int],
    width_of: Callable[[str], float],
    height: float,
    bounds: tuple[float, float, float, float],
    max_labels: int = 200,
    max_tries: int = 4000,
    gap: float = 2.0,
    offset: float | None = None,
    tries_per_step: int = 4000,
    callouts: int = 0,
) -> Generator[None, None, list[PlacedLabel]]:
    """Greedy placement: in priority order, put each label beside its point (right, left, above,
    below) where its box overlaps no label placed before and stays inside `bounds`
    (x0, y0, x1, y1, in the same pixel units as px/py), `offset` pixels from the point.
    The first `callouts` labels of `order` (the query and its nearest neighbours, which often
    sit on top of each other) that find no room beside their point go farther out, in rings,
    as callouts (`leader` set). Other labels that do not fit are left out. It goes in steps of
    `tries_per_step` labels tried (a window spreads them over turns of its event loop); the
    placement is the return value."""
    x0, y0, x1, y1 = bounds
    cell = 4.0 * height  # a grid of buckets: each test looks only at nearby labels
    grid: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}
    placed: list[PlacedLabel] = []
    xs, ys = np.asarray(px, dtype=np.float64), np.asarray(py, dtype=np.float64)
    for tries, i in enumerate(order):
        if len(placed) >= max_labels or tries >= max_tries:
            break
        if tries and tries % tries_per_step == 0:
            yield
        i = int(i)
        x, y = float(xs[i]), float(ys[i])
        if not (x0 <= x <= x1 and y0 <= y <= y1):  # also false for NaN
            continue
        w, h = width_of(texts[i]), height
        r = 0.35 * h if offset is None else offset
        near = _beside(x, y, w, h, r)
        corners = near + _callouts(x, y, w, h) if tries < callouts else near
        for n, (cx, cy) in enumerate(corners):
            if cx < x0 or cy < y0 or cx + w > x1 or cy + h > y1:
                continue
            a0, a1, b0, b1 = cx - gap, cx + w + gap, cy - gap, cy + h + gap
            keys = [
                (gx, gy)
                for gx in range(int(a0 // cell), int(a1 // cell) + 1)
                for gy in range(int(b0 // cell), int(b1 // cell) + 1)
            ]
            if any(
                a0 < bx1 and bx0 < a1 and b0 < by1 and by0 < b1
                for key in keys
                for bx0, by0, bx1, by1 in grid.get(key, ())
            ):
                continue
            box = (cx, cy, cx + w, cy + h)
            for key in keys:
                grid.setdefault(key, []).append(box)
            placed.append(PlacedLabel(i, float(cx), float(cy), float(w), float(h), n >= len(near)))
            break
    return placed


def all_at_once(stepwise: Callable[P, Generator[None, None, R]]) -> Callable[P, R]:
    """`stepwise` run to its end in one call, returning the generator's value."""

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        steps = stepwise(*args, **kwargs)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value

    return run


place_labels = all_at_once(placing_labels)  # the whole placement in one call (the SVG figure)


def label_order(n: int, similarity: np.ndarray | None, highlight: Sequence[int]) -> np.ndarray:
    """Highlighted points first, then by similarity (best first) or in the given order (int64;
    numpy throughout: a whole vocabulary is a quarter of a million points)."""
    first = np.asarray([int(i) for i in highlight if 0 <= int(i) < n], dtype=np.int64)
    first = first[np.sort(np.unique(first, return_index=True)[1])]  # repeats: the first one
    if similarity is not None:
        rest = np.argsort(
            -np.nan_to_num(np.asarray(similarity, dtype=np.float64), nan=-np.inf), kind="stable"
        )
    else:
        rest = np.arange(n)
    if len(first):
        keep = np.ones(n, dtype=bool)
        keep[first] = False
        rest = rest[keep[rest]]
    return np.concatenate([first, rest]).astype(np.int64)


def rank_knots(
    values: np.ndarray, exclude: set[int] | Sequence[int] = (), stops: int = 17
) -> np.ndarray:
    """The values at `stops` evenly spaced quantiles (the points in `exclude`, the query, left
    out): a colour scale through these knots gives each colour step as many points, so that
    similarities bunched between 0.2 and 0.4 get most of the colours, not one dark shade."""
    v = np.asarray(values, dtype=np.float64).copy()
    if len(exclude) and len(exclude) < len(v):
        v[list(exclude)] = np.nan
    v = v[np.isfinite(v)]
    if v.size == 0:
        return np.linspace(0.0, 1.0, stops)
    knots = np.quantile(v, np.linspace(0.0, 1.0, stops))
    if knots[-1] <= knots[0]:
        return np.linspace(knots[0] - 0.5, knots[0] + 0.5, stops)
    # strictly increasing (ties where many points share a value), for interpolation
    return np.maximum.accumulate(knots + np.arange(stops) * 1e-12 * (knots[-1] - knots[0]))


def rank_position(values: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Where each value sits on a scale through `knots`, 0..1 (NaN stays NaN)."""
    v = np.asarray(values, dtype=np.float64)
    t = np.interp(v, knots, np.linspace(0.0, 1.0, len(knots)))
    t[~np.isfinite(v)] = np.nan
    return t


def map_svg(
    coords: np.ndarray,
    labels: Sequence[str],
    *,
    title: str,
    subtitle: str = "",
    similarity: np.ndarray | None = None,
    highlight: Sequence[int] = (),
    colour_label: str = "",
    width: int = 1920,
    height: int = 1080,
    label_size: float = 17.0,
    max_labels: int = 160,
    category: np.ndarray | None = None,
    categories: Sequence[str] = (),
    highlight_name: str = "query",
) -> str:
    """The whole figure as an SVG document of `width` × `height` pixels.

    `highlight` are point indices (not ids) drawn larger, outlined and always labelled first,
    named `highlight_name` in the legend. Points are coloured by `similarity` (a colour bar),
    or by `category` (an index into `categories`, a legend of swatches)."""
    coords = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    n = len(coords)
    keyed = similarity is not None or category is not None
    left, right = 50.0, (230.0 if keyed else 50.0)
    top, bottom = 120.0 if subtitle else 90.0, 40.0
    pw, ph = width - left - right, height - top - bottom
    cx, cy, finite = _to_pixels(coords, left, top, pw, ph)

    radius = 5.0 if n <= 1000 else 3.5 if n <= 5000 else 2.2 if n <= 20000 else 1.4
    hl = {int(i) for i in highlight if 0 <= int(i) < n}
    knots = np.linspace(0.0, 1.0, COLOUR_STOPS)
    if category is not None:
        palette = np.array(CATEGORICAL, dtype=np.uint8)
        colours = palette[np.asarray(category, dtype=np.int64) % len(palette)]
    elif similarity is not None:  # by rank, as the window's map: 0.2 and 0.4 colours apart
        knots = rank_knots(similarity, sorted(hl), COLOUR_STOPS)
        colours = viridis(rank_position(similarity, knots))
    else:
        colours = np.tile(np.array(DEFAULT_POINT, dtype=np.uint8), (n, 1))

    out = [svg.text(left, 58, title, 34, fill="#222222", font_weight="bold")]
    if subtitle:
        out.append(svg.text(left, 92, subtitle, 20, fill="#555555"))
    out.append(
        f'<rect x="{left:.1f}" y="{top:.1f}" width="{pw:.1f}" height="{ph:.1f}" fill="none" '
        f'stroke="#dddddd" stroke-width="1"/>'
    )
    placed = place_labels(
        cx,
        cy,
        labels,
        label_order(n, similarity, sorted(hl)).tolist(),
        lambda s: svg.text_width(s, label_size) + 8,
        label_size * 1.3,
        (left + 2, top + 2, left + pw - 2, top + ph - 2),
        max_labels,
    )
    out += _points_svg(cx, cy, finite, colours, similarity, hl, radius)
    out += _labels_svg(placed, labels, hl, label_size)
    marker = (radius, highlight_name) if hl else None
    if category is not None:
        out += _legend_svg((width - right + 40, top + 40), colour_label, categories, marker)
    elif similarity is not None:
        bar = (width - right + 60, top + 40, 26.0, min(420.0, ph - 80))
        out += _colour_bar_svg(bar, colour_label, knots, marker)
    return svg.document(width, height, out)


def _marker_svg(x: float, y: float, marker: tuple[float, str]) -> list[str]:
    """The highlighted points' legend entry: their marker and name."""
    radius, name = marker
    return [
        f'<circle cx="{x + 13:.1f}" cy="{y:.1f}" r="{radius * 2.2:.1f}" '
        f'fill="{svg.colour(HIGHLIGHT)}" stroke="#ffffff" stroke-width="2"/>',
        svg.text(x + 34, y + 6, name, 17, fill="#333333"),
    ]


def _legend_svg(
    at: tuple[float, float],
    title: str,
    names: Sequence[str],
    marker: tuple[float, str] | None,
) -> list[str]:
    """Swatches for categorical colours, then the highlighted points' marker."""
    x, y = at
    out = [svg.text(x, y - 16, title, 18, fill="#333333")] if title else []
    for k, name in enumerate(names):
        colour = CATEGORICAL[k % len(CATEGORICAL)]
        out += [
            f'<circle cx="{x + 13:.1f}" cy="{y + 30 * k:.1f}" r="7" fill="{svg.colour(colour)}"/>',
            svg.text(x + 34, y + 30 * k + 6, name, 17, fill="#333333"),
        ]
    if marker is not None:
        out += _marker_svg(x, y + 30 * len(names) + 10, marker)
    return out


def neighborhood_svg(
    nb: Neighborhood,
    coords: np.ndarray,
    *,
    title: str | None = None,
    subtitle: str = "",
    width: int = 1920,
    height: int = 1080,
) -> str:
    """The figure of a mapped neighbourhood (`embedding-explorer project`, the window's map
    export): its query tokens highlighted, the points coloured by cosine to the query."""
    position = {int(i): k for k, i in enumerate(nb.ids)}
    highlight = [position[i] for i in nb.query_ids if i in position]
    one = len(nb.query_ids) == 1 and highlight
    query = f"“{nb.labels[highlight[0]]}”" if one else "the nearest query token"
    return map_svg(
        coords,
        nb.labels,
        title=title or nb.title[:1].upper() + nb.title[1:],
        subtitle=subtitle,
        similarity=nb.similarity,
        highlight=highlight,
        colour_label=f"cosine to {query}",
        width=width,
        height=height,
    )


def _to_pixels(
    coords: np.ndarray, left: float, top: float, pw: float, ph: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel x, y of every point in the plot box (equal scale on both axes, so the layout is not
    stretched; a margin for labels at the edges), and which points are finite."""
    # asarray: numpy's stubs type .all(axis=...) as possibly a scalar
    finite = np.asarray(np.isfinite(coords).all(axis=1))
    lo = coords[finite].min(axis=0) if finite.any() else np.zeros(2)
    hi = coords[finite].max(axis=0) if finite.any() else np.ones(2)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    scale = min((pw - 40) / span[0], (ph - 30) / span[1])
    cx = left + pw / 2 + (coords[:, 0] - (lo[0] + hi[0]) / 2) * scale
    cy = top + ph / 2 - (coords[:, 1] - (lo[1] + hi[1]) / 2) * scale
    return cx, cy, finite


def _points_svg(
    cx: np.ndarray,
    cy: np.ndarray,
    finite: np.ndarray,
    colours: np.ndarray,
    similarity: np.ndarray | None,
    hl: set[int],
    radius: float,
) -> list[str]:
    # the most similar points last, so that they sit on top
    draw = (
        np.argsort(np.nan_to_num(similarity, nan=-np.inf))
        if similarity is not None
        else np.arange(len(cx))
    )
    out = ['<g stroke="none" fill-opacity="0.85">']
    for i in draw:
        if finite[i] and int(i) not in hl:
            out.append(
                f'<circle cx="{cx[i]:.1f}" cy="{cy[i]:.1f}" r="{radius}" '
                f'fill="{svg.colour(colours[i])}"/>'
            )
    out.append("</g>")
    for i in sorted(hl):
        if finite[i]:
            out.append(
                f'<circle cx="{cx[i]:.1f}" cy="{cy[i]:.1f}" r="{radius * 2.2:.1f}" '
                f'fill="{svg.colour(HIGHLIGHT)}" stroke="#ffffff" stroke-width="2"/>'
            )
    return out


def _labels_svg(
    placed: list[PlacedLabel], labels: Sequence[str], hl: set[int], label_size: float
) -> list[str]:
    # half-transparent label backgrounds over the points: text stays legible, points show through
    out = ['<g fill="#ffffff" fill-opacity="0.8">']
    for p in placed:
        out.append(
            f'<rect x="{p.x:.1f}" y="{p.y:.1f}" width="{p.w:.1f}" height="{p.h:.1f}" rx="3"/>'
        )
    out.append("</g>")
    for p in placed:
        bold = p.index in hl
        out.append(
            svg.text(
                p.x + 4,
                p.y + p.h * 0.77,
                labels[p.index],
                label_size,
                fill=svg.colour(HIGHLIGHT) if bold else "#1a1a1a",
                font_weight="bold" if bold else "normal",
            )
        )
    return out


def _colour_bar_svg(
    bar: tuple[float, float, float, float],
    colour_label: str,
    knots: np.ndarray,
    marker: tuple[float, str] | None,
) -> list[str]:
    """The similarity colour bar on a scale of ranks, as the points are coloured: equal steps
    of colour, each edge labelled with its value (the rank `knots`); and the highlighted
    points' legend when `marker` (their radius and name) is set."""
    bx, by, bw, bh = bar
    last = len(knots) - 1
    stops = "".join(
        f'<stop offset="{k / last:.3f}" '
        f'stop-color="{svg.colour(viridis(np.array([1 - k / last]))[0])}"/>'
        for k in range(last + 1)
    )
    out = [
        f'<defs><linearGradient id="cbar" x1="0" y1="0" x2="0" y2="1">{stops}'
        "</linearGradient></defs>",
        svg.text(bx, by - 16, colour_label or "similarity", 18, fill="#333333"),
        f'<rect x="{bx:.1f}" y="{by:.1f}" width="{bw}" height="{bh:.1f}" fill="url(#cbar)" '
        f'stroke="#888888" stroke-width="1"/>',
    ]
    for k, value in enumerate(knots.tolist()):  # top: the largest
        y = by + bh * (1 - k / last)
        out.append(svg.text(bx + bw + 8, y + 6, f"{value:.3f}", 17, fill="#333333"))
    out.append(svg.text(bx, by + bh + 30, "steps of equal count", 14, fill="#777777"))
    if marker is not None:
        out += _marker_svg(bx, by + bh + 60, marker)
    return out


def coordinates_csv(
    ids: Sequence[int] | np.ndarray, labels: Sequence[str], coords: np.ndarray
) -> str:
    """`id,piece,x,y` rows (pieces quoted as CSV needs)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "piece", "x", "y"])
    for i, label, (x, y) in zip(ids, labels, np.asarray(coords, dtype=np.float64), strict=True):
        writer.writerow([int(i), label, f"{x:.6g}", f"{y:.6g}"])
    return buf.getvalue()


def coordinates_json(
    ids: Sequence[int] | np.ndarray, labels: Sequence[str], coords: np.ndarray, **meta
) -> str:
    """{"meta": {...}, "points": [{"id", "piece", "x", "y"}, ...]} as JSON text."""
    import json

    points = [
        {"id": int(i), "piece": label, "x": float(x), "y": float(y)}
        for i, label, (x, y) in zip(ids, labels, np.asarray(coords, dtype=np.float64), strict=True)
    ]
    return json.dumps({"meta": meta, "points": points}, ensure_ascii=False, allow_nan=False) + "\n"
