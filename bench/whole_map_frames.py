"""Frame times of the whole-vocabulary map: every row loaded, panned at five zoom levels.

    QT_QPA_PLATFORM=offscreen python bench/whole_map_frames.py --model MODEL [--coords c.npy]
        [--rows 248320] [--size 1280x800] [--frames 40]

The map is the window's MapView, shown as a real top-level Qt window, coloured by token kind,
with the model's labels. Its coordinates are a real whole-vocabulary layout: `--coords` (the
output of `embedding-explorer project --all --model MODEL --out c.npy`), else the layout
cached for MODEL (computed first if there is none). With `--rows` larger than the layout, the
layout is repeated with a small jitter to that many points (said so in the output): the frame
cost depends on the points and the screen, not on what they mean.

Five zoom levels, from the whole map to about 200 points in view, on the densest part of the
map; at each, `--frames` pans round a circle a tenth of the view across. Per frame: the paint
(a synchronous repaint of the view: points or density image, labels, legend), and the label
update that follows a pan (placing up to 60 labels from the tiles in view, and moving the
label items). Printed: median and 90th percentile of the frame, in wall time and in the
process's CPU time (on a shared machine the wall time is mostly waiting for a core), of its
paint and label parts, the points in view and what was drawn. Floor, same run: the same frames
with the points hidden (what pyqtgraph and the labels cost alone). Reference, same run:
pyqtgraph's own ScatterPlotItem with every point (what one would use otherwise), paint time at
overview (--no-reference to skip). Last, the Map tab's 4K figure export of the whole map.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LEVELS = 5
FEWEST = 200  # points in view at the closest zoom
PAN_RADIUS = 0.1  # the pans go round a circle this share of the view's width across


def layout(model, coords_file: str | None) -> np.ndarray:
    """A real whole-vocabulary layout of `model`: from the file, else the cached one (made if
    there is none, with the CLI's defaults)."""
    from explorer.core.map import whole

    if coords_file:
        coords = np.load(coords_file, allow_pickle=False)
    else:
        params = whole.WholeParams()
        coords = whole.load_cached(model, params)
        if coords is None:
            print("  no cached layout: laying out the whole vocabulary first", flush=True)
            coords = whole.whole_map(model, params).coords
    if coords.shape != (model.rows, 2):
        raise SystemExit(f"{coords_file}: {coords.shape}, not ({model.rows}, 2)")
    return coords


def points(model, coords: np.ndarray, rows: int, seed: int = 0):
    """(ids, labels, coords, kind codes, kind names, how made) of the visible rows, repeated
    with jitter up to `rows` points if there are fewer."""
    from explorer.core.analysis.kinds import KINDS, token_kinds
    from explorer.core.map import whole

    keep = ~whole.hidden_rows(model) & np.isfinite(coords).all(axis=1)
    ids = np.flatnonzero(keep)
    labels = [model.label(int(i)) for i in ids]
    kinds = token_kinds(model).codes.astype(np.int64)
    xy = coords[ids].astype(np.float32)
    how = f"{len(ids):,} rows of the real layout"
    if rows > len(ids):
        copies = -(-rows // len(ids))
        rng = np.random.default_rng(seed)
        span = float(np.ptp(xy, axis=0).max())
        xy = np.concatenate(
            [xy] + [xy + rng.normal(0, 0.003 * span, xy.shape) for _ in range(copies - 1)]
        )
        xy = xy[:rows].astype(np.float32)
        take = np.arange(rows) % len(ids)
        how += f", repeated {rows / len(ids):.2f}× with jitter to {rows:,} points"
        labels = [labels[k] for k in take]
        codes = kinds[ids][take]
        ids = np.arange(rows)  # ids of the repeated points: their own numbers
    else:
        codes = kinds[ids]
    all_codes = np.zeros(int(ids.max()) + 1, dtype=np.int64)
    all_codes[ids] = codes
    return ids, labels, xy, all_codes, list(KINDS), how


def spans(view, fewest: int) -> tuple[np.ndarray, np.ndarray]:
    """(centre, view half-widths of the five levels): overview to about `fewest` points in
    view, zoomed on the densest tile of the map."""
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    tiles = view.cloud.tiles
    level = 6
    lv = tiles.levels[level]
    k = int(np.argmax(lv.counts))
    side = tiles.tile_side(level)
    centre = np.array(tiles.origin) + (np.array([lv.ix[k], lv.iy[k]]) + 0.5) * side
    aspect = (y1 - y0) / (x1 - x0)
    wide = (x1 - x0) / 2
    near = wide
    while near > 1e-9:  # halve until few enough points are in view
        r = (
            centre[0] - near,
            centre[1] - near * aspect,
            centre[0] + near,
            centre[1] + near * aspect,
        )
        if inside(view.coords, r) <= fewest:
            break
        near /= 1.25
    return centre, wide * (near / wide) ** (np.arange(LEVELS) / (LEVELS - 1))


def inside(xy: np.ndarray, rect) -> int:
    x0, y0, x1, y1 = rect
    return int(((xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)).sum())


def clock() -> float:
    return time.perf_counter()


def pan_frames(app, view, centre, half: float, frames: int, show_points: bool = True):
    """Per frame, while panning around `centre` at this zoom: paint and label update, each as
    [wall ms, CPU ms of all the process's threads]."""
    view.cloud.setVisible(show_points)
    vb = view.viewbox
    (x0, x1), (y0, y1) = vb.viewRange()
    aspect = (y1 - y0) / (x1 - x0)
    vb.setRange(
        xRange=(centre[0] - half, centre[0] + half),
        yRange=(centre[1] - half * aspect, centre[1] + half * aspect),
        padding=0,
    )
    settle(app, view)
    paint, labels, drawn, in_view, placed = [], [], set(), [], []
    step = 2 * np.pi * PAN_RADIUS * 2 * half / frames  # once round, whatever the frames
    for f in range(frames):
        angle = 2 * np.pi * f / frames  # round a small circle: the view stays near the centre
        vb.translateBy(x=step * np.cos(angle), y=step * np.sin(angle))
        t0, c0 = clock(), time.process_time()
        view._label_timer.stop()
        view.update_labels()
        view._labels.apply()
        t1, c1 = clock(), time.process_time()
        view.graphics.viewport().repaint()
        t2, c2 = clock(), time.process_time()
        app.processEvents()
        labels.append(((t1 - t0) * 1000, (c1 - c0) * 1000))
        paint.append(((t2 - t1) * 1000, (c2 - c1) * 1000))
        drawn.add(view.cloud.last_kind if show_points else "nothing")
        (a, b), (c, d) = vb.viewRange()
        in_view.append(inside(view.coords, (a, c, b, d)))
        placed.append(len(view.visible_labels()))
    view.cloud.setVisible(True)
    return np.array(paint), np.array(labels), drawn, int(np.median(in_view)), int(np.median(placed))


def settle(app, view) -> None:
    for _ in range(5):
        app.processEvents()
        time.sleep(0.01)
    view._labels.apply()


def reference(app, view, frames: int) -> np.ndarray:
    """pyqtgraph's ScatterPlotItem with every point, at overview: paint ms per frame."""
    import pyqtgraph as pg

    from explorer.core.map.kind_colors import kind_palette

    palette = [pg.mkBrush(*rgb, 220) for rgb in kind_palette(view.kinds[1])]
    codes = view.values["kind"]
    t = time.perf_counter()
    item = pg.ScatterPlotItem(pxMode=True, pen=None, size=3)
    item.setData(x=view.coords[:, 0], y=view.coords[:, 1], brush=[palette[c] for c in codes])
    setup = time.perf_counter() - t
    view.cloud.setVisible(False)
    view.plot.addItem(item)
    view.frame_bulk()
    settle(app, view)
    times = []
    for f in range(frames):
        view.viewbox.translateBy(x=0.01 * np.cos(f), y=0.01 * np.sin(f))
        t0 = time.perf_counter()
        view.graphics.viewport().repaint()
        times.append((time.perf_counter() - t0) * 1000)
    view.plot.removeItem(item)
    view.cloud.setVisible(True)
    print(
        f"  pyqtgraph ScatterPlotItem (reference): setData {setup:.1f} s; paint at overview "
        f"median {np.median(times):.0f} ms, p90 {np.percentile(times, 90):.0f} ms"
    )
    return np.array(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--coords", help="the layout (.npy [rows, 2]); default: the cached one")
    ap.add_argument("--rows", type=int, default=0, help="repeat the layout up to this many points")
    ap.add_argument("--size", default="1280x800", help="the map view's size in pixels")
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ee-frames-"))
    from PySide6.QtWidgets import QApplication

    from explorer.core.map import tiles
    from explorer.core.model.open import open_model
    from explorer.ui.map.view import MapView
    from explorer.ui.widgets.style import apply_theme
    from explorer.ui.window.launch import quiet_offscreen_warnings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    quiet_offscreen_warnings()
    apply_theme(app)
    model = open_model(args.model)
    ids, labels, xy, all_codes, names, how = points(model, layout(model, args.coords), args.rows)
    t = time.perf_counter()
    quadtree = tiles.build(xy, tiles.token_priority(ids, labels))
    built = time.perf_counter() - t
    view = MapView()
    view.resize(*(int(v) for v in args.size.split("x")))
    view.show()
    view.set_kinds(all_codes, names)
    view.set_points(ids, labels, xy, tile_index=quadtree)
    view.set_colour_mode("kind")
    settle(app, view)
    print(
        f"{Path(args.model).name}: {len(ids):,} points ({how}); view {args.size}, coloured by "
        f"kind; quadtree built in {built:.2f} s (once per layout, off the GUI thread)"
    )
    centre, halves = spans(view, FEWEST)
    print(
        "  ms per frame, median/p90; wall = elapsed, cpu = the process's CPU time (the "
        "machine's other load left out); floor = the same frames without the points"
    )
    print(
        f"  {'zoom':>5} {'in view':>8} {'drawn':>8} {'labels':>6} | {'frame wall':>11} "
        f"{'frame cpu':>11} | {'paint cpu':>11} {'labels cpu':>11} | "
        f"{'floor wall':>10} {'floor cpu':>9}"
    )
    worst = 0.0
    for k, half in enumerate(halves):
        paint, lab, drawn, n_in, placed = pan_frames(app, view, centre, half, args.frames)
        floor, floor_lab, _, _, _ = pan_frames(
            app, view, centre, half, max(args.frames // 2, 5), False
        )
        frame, floor = paint + lab, floor + floor_lab
        worst = max(worst, float(np.median(frame[:, 1])))
        mp = lambda a: f"{np.median(a):5.1f}/{np.percentile(a, 90):5.1f}"  # noqa: E731
        print(
            f"  {halves[0] / half:>4.0f}× {n_in:>8,} {'/'.join(sorted(drawn)):>8} {placed:>6} | "
            f"{mp(frame[:, 0])} {mp(frame[:, 1])} | {mp(paint[:, 1])} {mp(lab[:, 1])} | "
            f"{np.median(floor[:, 0]):>10.1f} {np.median(floor[:, 1]):>9.1f}"
        )
        if k == 0 and not args.no_reference:
            ref = reference(app, view, max(args.frames // 4, 5))
            print(
                f"  overview: {np.median(ref) / np.median(frame[:, 0]):.0f}× faster than "
                "pyqtgraph's scatter (wall)"
            )
    print(
        f"  worst median frame (CPU) {worst:.1f} ms: goal ≤ 33 ms "
        f"{'met' if worst <= 33 else 'NOT met'}"
    )
    export_4k(app, view, ids, labels, xy)
    view.close()
    return 0


def export_4k(app, view, ids, labels, xy) -> None:
    """The Map tab's 4K figure export of the whole map (overview), as the menu writes it."""
    from explorer.core.map.neighborhood import Neighborhood
    from explorer.core.map.pipeline import MapData
    from explorer.ui.map import export

    view.frame_bulk()
    settle(app, view)
    nb = Neighborhood(ids, labels, None, (), f"The whole vocabulary: {len(ids):,} tokens")
    data = MapData(nb, np.zeros((len(ids), 0), np.float32), np.empty(0), xy, final=True)
    out = Path(tempfile.mkdtemp(prefix="ee-4k-")) / "map.png"
    t, c = clock(), time.process_time()
    export.write_map(view, data, out, figure_size=export.FIGURE_4K)
    wall, cpu = clock() - t, time.process_time() - c
    print(
        f"  4K figure export (3840 × 2160 PNG, {out.stat().st_size / 1e6:.1f} MB): "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU; {out}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
