"""The analysis tabs on a large BF16 model: time to a result and the longest GUI-thread gap while
each tab computes and draws (explain, statistics with a fresh cache, head, dimension view).
Besides each gap's length it prints the GUI thread's own CPU time within it and the longest CPU
stretch between two ticks: on a loaded machine a gap is mostly time spent waiting for a core,
the CPU stretch is what the window itself did (the part that stays on an idle machine).

Usage: python bench/analysis_views.py [--rows 200000] [--dim 768] [--dir /tmp/bench-views]
The model is written once (random BF16 rows, WordLevel tokenizer) into --dir."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bench-views-cache-")  # compute, not load

from lib.gaps import GapMeter
from lib.models import random_bf16_model
from lib.window import open_window

from explorer.app import tuning
from explorer.app.state import AppState, open_for_window


def measure(app, window, done, start) -> tuple[float, GapMeter]:
    meter = GapMeter()
    meter.start()
    began = time.perf_counter()
    start()
    while not done() or window.pending:
        app.processEvents()
        time.sleep(0.001)
    seconds = time.perf_counter() - began
    meter.stop()
    return seconds, meter


def line(name: str, seconds: float, m: GapMeter) -> str:
    return (
        f"{name:28s} {seconds:7.2f} s   longest GUI gap {m.max_gap_ms:6.1f} ms "
        f"(GUI thread busy {m.longest.cpu_ms:5.1f} ms of it; "
        f"longest busy stretch {m.max_cpu_ms:5.1f} ms)"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--dir", default="/tmp/bench-views")
    args = ap.parse_args()
    folder = Path(args.dir) / f"bf16-{args.rows}x{args.dim}"
    if not (folder / "model.safetensors").exists():
        random_bf16_model(folder, args.rows, args.dim)
    tuning.tune_process()  # before the model opens, as at the app's start
    state = AppState()
    state.set_model(open_for_window(folder))
    app, window = open_window(Path(args.dir) / "settings.ini", False, state=state, warm_up=False)
    while window.pending:
        app.processEvents()
    tabs = window.analysis
    token = args.rows // 3
    state.select([token])
    print(f"model {args.rows:,} × {args.dim} BF16; load before: {os.getloadavg()}")
    runs = [
        ("explain (onehot · E)", lambda: tabs.explain.latest is not None, tabs.explain_view),
        ("statistics pass", lambda: tabs.stats.dimension is not None, tabs.stats_view),
        ("head (tied: direct path)", lambda: tabs.head.token is not None, tabs.head_view),
    ]
    for name, done, view in runs:
        seconds, m = measure(app, window, done, lambda v=view: window.centre.setCurrentWidget(v))
        print(line(name, seconds, m))
    tabs.stats.dimension = None
    seconds, m = measure(
        app, window, lambda: tabs.stats.dimension is not None, lambda: tabs.stats.show_dimension(5)
    )
    print(line("dimension view (dim 5)", seconds, m))
    print(f"load after: {os.getloadavg()}")
    window.close()
    shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
