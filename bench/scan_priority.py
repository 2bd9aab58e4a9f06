"""Does a vocabulary scan on a niced worker leave the window's thread its core? An A/B.

Opens a model (by default the 2 GB matrix `gui_latency.py --keep` leaves) and keeps the
neighbours lane busy with exact searches, one after another, as while someone clicks through
tokens before the fast index exists. Beside it a child process at the index builder's niceness
keeps the other core busy, as the build does. The GUI thread meanwhile does a click's worth of
work (~12 ms of numpy and Python) every 40 ms, and a 5 ms timer measures its gaps. Rounds
alternate the lane's worker at niceness 0 and at `jobs.SCAN_NICE`; each prints the GUI thread's
wait for a core per second, its longest gaps and how many exact searches finished.

    python bench/scan_priority.py [--model /tmp/gl-real/model] [--rounds 4] [--seconds 12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from event_loop import wait_until
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from explorer.app import jobs as jobs_mod
from explorer.app import tuning
from explorer.app.controllers.neighbors import NEIGHBORS_LANE
from explorer.app.gapmeter import GapMeter, thread_waits
from explorer.app.jobs import Jobs, LaneSpec
from explorer.core.model.open import open_model
from explorer.core.search.neighbors import NeighborSearcher
from explorer.core.search.queries import query_for_ids

HOG = "import os, numpy as np; os.nice({nice}); a = np.ones(1 << 20)\nwhile True: a *= 1.0000001"


def click_work(rng: np.random.Generator) -> None:
    """~12 ms on the GUI thread: numpy over a small block and a Python loop, like a click's
    layout and paint."""
    block = rng.standard_normal((256, 1024), dtype=np.float32)
    for _ in range(6):
        block = np.tanh(block) * 1.01
    total = 0
    for i in range(60_000):
        total += i & 7


def run_round(app, jobs: Jobs, spec: LaneSpec, searcher, model, seconds: float) -> dict[str, float]:
    rng = np.random.default_rng(1)
    lane = jobs.lane(spec)
    done = [0]

    def next_search(*_) -> None:
        if time.monotonic() < end:
            row = int(rng.integers(model.rows))
            lane.submit(
                lambda ctx, r=row: searcher.search(query_for_ids(model, [r]), exact=True, ctx=ctx),
                on_result=lambda _r: (done.__setitem__(0, done[0] + 1), next_search()),
            )

    clicks = QTimer()
    clicks.setInterval(40)
    clicks.timeout.connect(lambda: click_work(rng))
    meter = GapMeter(5, keep_over_ms=20)
    before = thread_waits()[0]  # the GUI thread's wait for a core so far
    end = time.monotonic() + seconds
    meter.start()
    clicks.start()
    next_search()
    wait_until(app, lambda: time.monotonic() >= end, seconds + 10)
    clicks.stop()
    meter.stop()
    wait_until(app, lambda: not lane.busy, 120)  # the last search ends before the next round
    waited = (thread_waits()[0] - before) * 1000
    gaps = sorted((g.ms for g in meter.long_gaps), reverse=True)
    return {
        "queued ms/s": waited / seconds,
        "longest": gaps[0] if gaps else 0.0,
        "5th longest": gaps[4] if len(gaps) > 4 else 0.0,
        "gaps > 30 ms": sum(g > 30 for g in gaps),
        "searches": done[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="/tmp/gl-real/model")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=12.0)
    args = parser.parse_args()
    app = QApplication([])
    model = open_model(args.model, tokenizer=False)
    searcher = NeighborSearcher(model)
    hog = subprocess.Popen(
        [sys.executable, "-c", HOG.format(nice=tuning.BACKGROUND_NICE)],
        env=tuning.background_env(),
    )
    results: dict[int, list[dict[str, float]]] = {0: [], jobs_mod.SCAN_NICE: []}
    try:
        for n in range(args.rounds):
            for nice in (0, jobs_mod.SCAN_NICE) if n % 2 == 0 else (jobs_mod.SCAN_NICE, 0):
                spec = NEIGHBORS_LANE if nice else LaneSpec(NEIGHBORS_LANE.name)
                jobs = Jobs()  # a new lane: a new worker thread, at the window's niceness
                out = run_round(app, jobs, spec, searcher, model, args.seconds)
                jobs.shutdown(10000)
                results[nice].append(out)
                shown = ", ".join(f"{k} {v:.1f}" for k, v in out.items())
                print(f"round {n} nice {nice}: {shown}", flush=True)
    finally:
        hog.kill()
    for nice, rounds in results.items():
        summary = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        print(f"nice {nice}, medians: " + ", ".join(f"{k} {v:.1f}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
