"""The window while it maps the whole vocabulary from scratch: when the first picture and the
final layout appear, the GUI thread's longest gap in each phase, what the GUI thread was doing in
its longest stalls, and a screenshot.

    QT_QPA_PLATFORM=offscreen python bench/whole_map_gui.py MODEL [--out shot.png] [--size 1280x800]
        [--zoom 8,64]   # also screenshots zoomed in that many times on the map's densest part
    python bench/whole_map_gui.py MODEL --in-process     # the layout on a worker thread instead

Gaps are measured with a 5 ms timer on the GUI thread (bench/lib/gaps.py, which also says how
much of a gap the GUI thread waited for a core); stalls over 100 ms are sampled for their stacks
(bench/lib/stalls.py). The cache is a fresh temporary folder, so the layout is computed (a second
run in the same cache would show it at once). `--in-process` runs the layout on the map's worker
thread, as the window did before it ran in a child process: the floor this is measured against.
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
    ap.add_argument("--in-process", action="store_true", help="no child process (the floor)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ee-whole-gui-"))
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp / "cache"))
    from lib.gaps import Gap, GapMeter, OtherLoad
    from lib.processes import load
    from lib.stalls import StallSampler
    from lib.window import open_window, wait_until

    if args.in_process:
        from explorer.app import whole_map_process

        whole_map_process.can_spawn = lambda: False  # type: ignore[assignment]
    size = tuple(int(v) for v in args.size.split("x"))
    app, window = open_window(tmp / "settings.ini", persist=False, size=size)  # type: ignore[arg-type]
    window.open_path(args.model)
    wait_until(app, lambda: window.state.model is not None and window.state.loading is None, 600)
    window.centre.setCurrentIndex(window.host.tab_keys().index("map"))
    wait_until(app, lambda: not window.state.jobs.busy, 600)  # warm-up and opening work done
    pane = window.map_pane
    pane.source.setCurrentIndex(pane.source.findData("whole"))
    meter, sampler, others = GapMeter(5), StallSampler(threshold_ms=100), OtherLoad()
    meter.start()
    sampler.start()
    sampler.label = "first picture"
    start = time.perf_counter()
    pane.request_map()
    first = None
    phases: dict[str, Gap] = {}
    while True:
        app.processEvents()
        time.sleep(0.002)
        data = pane.data
        if data is not None and first is None:
            first = time.perf_counter() - start
            phases["first picture"] = meter.longest
            meter.reset()
            sampler.label = "layout"
        if data is not None and data.final and not pane.controller.running:
            break
    final = time.perf_counter() - start
    phases["layout"] = meter.longest
    meter.reset()
    sampler.label = "showing it"
    wait_until(app, lambda: not pane.view.labels_pending, 120)
    for _ in range(50):  # let the last paint land
        app.processEvents()
        time.sleep(0.01)
    meter.stop()
    phases["showing it"] = meter.longest
    sampler.stop()
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
    rows = f"{model.rows:,} rows" if model is not None else ""
    how = "worker thread (--in-process)" if args.in_process else "child process"
    print(f"{Path(args.model).name} ({rows}), layout in a {how}; {load()}")
    print(f"  first picture shown {first:.1f} s, final layout shown {final:.1f} s")
    print("  longest GUI-thread gap (of which its own CPU, waiting for a core):")
    for phase, gap in phases.items():
        print(f"    {phase:<14} {gap.ms:6.0f} ms ({gap.cpu_ms:.0f} ms, {gap.queued_ms:.0f} ms)")
    print(
        f"  other processes took {others.share():.0%} of the machine; "
        f"screenshots {', '.join(shots)}"
    )
    sampler.report(top=3, longest=4)
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
