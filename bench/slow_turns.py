"""What a slow turn of the event loop spent its time on: a profile of every turn, kept when slow.

Opens a model in the real main window (1280 x 800, offscreen) with its fast index building in
its child process and the model file dropped from the page cache, then clicks through random
tokens (every 25th adds a row, as gui_latency.py does). Every turn of the event loop runs under
its own cProfile; a turn that took more than --over ms of GUI-thread CPU is printed with the
functions it spent its time in. On the VM of docs/responsiveness.md every function of such a
turn ran tens to hundreds of times slower than in the other turns: the thread was slowed, not
handed more work.

    python bench/slow_turns.py [--model /tmp/gl-real/model] [--seed 2] [--clicks 600] [--over 35]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from event_loop import open_window, wait_until
from page_cache import drop_page_cache


def profile_text(profile: cProfile.Profile, order: str, lines: int) -> str:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats(order).print_stats(lines)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path("/tmp/gl-real/model"))
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--clicks", type=int, default=600)
    parser.add_argument("--over", type=float, default=35.0, help="ms of GUI-thread CPU")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="slow-turns-")
    os.environ["XDG_CACHE_HOME"] = cache  # no index yet: the build runs during the clicks
    app, window = open_window(Path(cache) / "settings.ini", persist=True)
    tensor_file = args.model / "model.safetensors" if args.model.is_dir() else args.model
    drop_page_cache(tensor_file)
    window.open_path(str(args.model))
    wait_until(app, lambda: window.state.model is not None and window.state.levels is not None, 300)
    rows = window.state.model.rows
    ids = np.random.default_rng(args.seed).choice(rows, min(args.clicks, rows), replace=False)
    drop_page_cache(tensor_file)  # the clicks' rows come from the disk
    slow: list[tuple[int, float, float, cProfile.Profile]] = []
    worst = 0.0
    for n, token_id in enumerate(ids.tolist()):
        window.state.select([int(token_id)], add=(n % 25 == 24))
        want = window.state.selection
        shown_at = None
        while shown_at is None or time.monotonic() - shown_at < 0.01:
            profile = cProfile.Profile()
            cpu, wall = time.thread_time(), time.perf_counter()
            profile.enable()
            app.processEvents()
            profile.disable()
            ms = (time.thread_time() - cpu) * 1000
            worst = max(worst, ms)
            if ms > args.over:
                slow.append((n, ms, (time.perf_counter() - wall) * 1000, profile))
            if shown_at is None and [r.id for r in window.viewer.rows] == want:
                shown_at = time.monotonic()
            time.sleep(0.001)
    listed = ", ".join(f"click {n} {ms:.1f} ms ({wall:.1f} wall)" for n, ms, wall, _ in slow)
    print(
        f"seed {args.seed}: {len(ids)} clicks, longest turn {worst:.1f} ms of GUI-thread CPU; "
        f"turns over {args.over:g} ms: {listed or 'none'}"
    )
    for n, ms, wall, profile in slow[:3]:
        print(f"\n== click {n}: {ms:.1f} ms of CPU, {wall:.1f} ms wall")
        print(profile_text(profile, "tottime", 12))
    window.close()  # cancels the index build (its child is killed)
    shutil.rmtree(cache, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main()
