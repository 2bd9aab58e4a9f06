"""The window while it maps the whole vocabulary: when the first picture and the final layout
appear, and the longest gap of the GUI thread's event loop meanwhile; saves a screenshot.

    QT_QPA_PLATFORM=offscreen python bench/whole_map_gui.py MODEL [--out shot.png] [--size 1280x800]
        [--zoom 8,64]   # also screenshots zoomed in that many times on the map's densest part

The cache is a fresh temporary folder, so the layout is computed (a second run in the same
cache would show it at once).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--out", default="whole_map.png")
    ap.add_argument("--size", default="1280x800")
    ap.add_argument("--zoom", default="", help="zoom factors for more screenshots, e.g. 8,64")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ee-whole-gui-"))
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    from lib.window import open_window, wait_until

    size = tuple(int(v) for v in args.size.split("x"))
    app, window = open_window(tmp / "settings.ini", persist=False, size=size)  # type: ignore[arg-type]
    window.open_path(args.model)
    wait_until(app, lambda: window.state.model is not None and window.state.loading is None, 600)
    window.centre.setCurrentIndex(window.host.tab_keys().index("map"))
    pane = window.map_pane
    pane.source.setCurrentIndex(pane.source.findData("whole"))
    start = last = time.perf_counter()
    pane.request_map()
    longest, first = 0.0, None
    while True:
        app.processEvents()
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
        data = pane.data
        if data is not None and first is None:
            first = now - start
        done = data is not None and data.final and not pane.controller.running
        if done and not pane.view.labels_pending and pane.colour.currentData() == "kind":
            break
        time.sleep(0.002)
    final = time.perf_counter() - start
    for _ in range(50):  # let the last paint land
        app.processEvents()
        time.sleep(0.01)
    window.grab().save(args.out)
    shots = [args.out]
    for factor in [float(z) for z in args.zoom.split(",") if z]:
        zoom_on_densest(pane.view, factor)
        wait_until(app, lambda: not pane.view.labels_pending, 60)
        for _ in range(20):
            app.processEvents()
            time.sleep(0.01)
        shot = str(Path(args.out).with_suffix("")) + f"-zoom{factor:g}.png"
        window.grab().save(shot)
        shots.append(shot)
    window.close()
    model = window.state.model
    print(
        f"{Path(args.model).name}: first picture shown {first:.1f} s, final layout shown "
        f"{final:.1f} s, longest GUI-thread gap {longest * 1000:.0f} ms; screenshots "
        f"{', '.join(shots)}" + (f" ({model.rows:,} rows)" if model is not None else "")
    )
    return 0


def zoom_on_densest(view, factor: float) -> None:
    """The view `factor` times closer than the overview, centred on the fullest tile of the
    map's quadtree (a level 6 tile: 1/64 of the map across)."""
    view.frame_bulk()
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    quadtree = view.cloud.tiles
    if quadtree is None:
        return
    lv = quadtree.levels[min(6, quadtree.depth)]
    k = int(lv.counts.argmax())
    side = quadtree.tile_side(min(6, quadtree.depth))
    cx = quadtree.origin[0] + (lv.ix[k] + 0.5) * side
    cy = quadtree.origin[1] + (lv.iy[k] + 0.5) * side
    hw, hh = (x1 - x0) / (2 * factor), (y1 - y0) / (2 * factor)
    view.viewbox.setRange(xRange=(cx - hw, cx + hw), yRange=(cy - hh, cy + hh), padding=0)


if __name__ == "__main__":
    raise SystemExit(main())
