"""Rare slow clicks: how often one click costs the GUI thread 80+ ms of its own CPU, and when.

Opens a model in the real main window (offscreen), then clicks through random tokens (a 2-row
selection every 25th click, as gui_latency.py does) and measures each click's GUI-thread CPU
time (getrusage), involuntary context switches, page faults, and a fixed piece of Python timed
just before and just after it. One line per run; the slowest clicks of each run in detail.
Used to find out what a slow click comes with (docs/responsiveness.md, "the rare slow
click").

    python bench/slow_clicks.py [--model /tmp/gl-real/model] [--runs 4] [--clicks 600]
        [--index build|cached]   # build: the app builds its fast index during the clicks
        [--no-neighbours]        # no neighbour search after a click
        [--evict]                # drop the model file from the page cache before clicking

Each run is a fresh process. --index cached keeps the previous run's index (the first run of a
series may still have to build it: each run says whether the index was ready at the start).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path("/tmp/slow-clicks-cache")


def spin_ms() -> float:
    """A fixed piece of Python (~0.5 ms): how fast the thread runs right now."""
    start = time.thread_time()
    sum(range(30_000))
    return (time.thread_time() - start) * 1000


def one_run(args: argparse.Namespace) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["XDG_CACHE_HOME"] = str(CACHE)
    if args.index == "build":
        shutil.rmtree(CACHE / "embedding-explorer" / "neighbors-index", ignore_errors=True)
    sys.path.insert(0, str(ROOT))
    import numpy as np
    from event_loop import open_window, wait_until  # bench/, beside this script
    from page_cache import drop_page_cache

    ini = CACHE / "settings.ini"
    ini.unlink(missing_ok=True)
    app, window = open_window(ini, persist=True)

    def wait(cond, timeout: float = 300.0) -> None:
        wait_until(app, cond, timeout)

    window.open_path(args.model)
    wait(lambda: window.state.model is not None and window.state.levels is not None)
    settle = time.monotonic() + 3.0  # a cached index loads in a moment
    wait(lambda: window.neighbors.fast_ready or time.monotonic() > settle)
    index_at_start = window.neighbors.fast_ready
    if args.no_neighbours:
        window.neighbors._settle.timeout.disconnect()
    if args.evict:
        drop_page_cache(Path(args.model) / "model.safetensors")
    rows = window.state.model.matrix.shape[0]
    ids = np.random.default_rng(args.seed).choice(rows, args.clicks, replace=False).tolist()
    clicks = []
    for n, token_id in enumerate(ids):
        before = spin_ms()
        r0 = resource.getrusage(resource.RUSAGE_THREAD)
        window.state.select([int(token_id)], add=(n % 25 == 24))
        want = window.state.selection
        wait(lambda want=want: [r.id for r in window.viewer.rows] == want)
        for _ in range(3):
            app.processEvents()
            time.sleep(0.002)
        r1 = resource.getrusage(resource.RUSAGE_THREAD)
        cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
        clicks.append(
            {
                "n": n,
                "id": int(token_id),
                "cpu_ms": round(cpu, 1),
                "sys_ms": round((r1.ru_stime - r0.ru_stime) * 1000, 1),
                "switches": r1.ru_nivcsw - r0.ru_nivcsw,
                "faults": r1.ru_minflt - r0.ru_minflt + r1.ru_majflt - r0.ru_majflt,
                "spin_before": round(before, 2),
                "spin_after": round(spin_ms(), 2),
            }
        )
    result = {
        "index_at_start": index_at_start,
        "index_at_end": window.neighbors.fast_ready,
        "clicks": clicks,
    }
    window.close()
    return result


def summary(result: dict) -> str:
    cpus = sorted(c["cpu_ms"] for c in result["clicks"][1:])  # the first click paints first
    median = cpus[len(cpus) // 2]
    return (
        f"index ready at start {result['index_at_start']!s:5} · click GUI CPU median "
        f"{median:.1f} ms, p99 {cpus[int(len(cpus) * 0.99)]:.1f}, max {cpus[-1]:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="/tmp/gl-real/model")
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--clicks", type=int, default=600)
    p.add_argument("--index", choices=("build", "cached"), default="build")
    p.add_argument("--no-neighbours", action="store_true")
    p.add_argument("--evict", action="store_true")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a run's own process
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(args)))
        return 0
    own = list(argv if argv is not None else sys.argv[1:])
    slow = 0
    for run in range(args.runs):
        seed = args.seed + run % 2  # two seeds in turn
        out = subprocess.run(
            [sys.executable, __file__, *own, "--one", "--seed", str(seed)],
            capture_output=True,
            text=True,
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        if out.returncode != 0 or not lines:
            print(f"run {run + 1}: failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        result = json.loads(lines[-1])
        print(f"run {run + 1} (seed {seed}): {summary(result)}", flush=True)
        worst = sorted(result["clicks"][1:], key=lambda c: -c["cpu_ms"])[:2]
        slow += worst[0]["cpu_ms"] >= 80
        for c in worst:
            print(
                f"    click {c['n']} (#{c['id']}): {c['cpu_ms']} ms CPU ({c['sys_ms']} in the "
                f"kernel), {c['switches']} "
                f"involuntary switches, {c['faults']} faults, spin {c['spin_before']} ms "
                f"before / {c['spin_after']} ms after"
            )
    print(f"runs with a click of 80+ ms of GUI CPU: {slow} of {args.runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
