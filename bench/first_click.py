"""The first clicks after a model opens: the GUI thread's CPU time, per turn of the event loop.

Opens a model in the real main window (1280 x 800, offscreen, no index build), waits until
every background job is done, then clicks three tokens one after another and prints, for each
click, its total GUI-thread CPU time and its longest turn. Each run is a fresh process (a first
click is only first once); the summary is the median over the runs.

    python bench/first_click.py [--model /tmp/gl-real/model] [--runs 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CLICKS = (1000, 2000, 3000)  # token ids; the model needs more rows than the last


def one_run(model: Path) -> list[tuple[float, float]]:
    """(total CPU ms, longest turn ms) per click, in this process."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT / "bench"))
    from event_loop import timed_click, wait_until, window_on_model

    app, window = window_on_model(str(model), "overview", "first-click-")
    settled = time.monotonic() + 1.0
    wait_until(app, lambda: time.monotonic() > settled, 10)
    clicks = [timed_click(app, window, token_id, after_s=0.2) for token_id in CLICKS]
    window.close()
    return clicks


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=Path("/tmp/gl-real/model"))
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a run's own process
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(args.model)))
        return 0
    runs = []
    for _ in range(args.runs):
        cmd = [sys.executable, __file__, "--model", str(args.model), "--one"]
        out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(
            "  "
            + "; ".join(
                f"click {n}: {t:.1f} ms, longest turn {w:.1f}" for n, (t, w) in enumerate(runs[-1])
            )
        )
    for n in range(len(CLICKS)):
        total = statistics.median(r[n][0] for r in runs)
        worst = statistics.median(r[n][1] for r in runs)
        print(f"click {n}: GUI CPU median {total:.1f} ms, longest turn median {worst:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
