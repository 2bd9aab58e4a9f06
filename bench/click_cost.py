"""What a click costs the GUI thread: its CPU time over every turn until the row is shown.

Opens a model in the real main window (1280 x 800, offscreen, no index build), waits until
every background job is done, then clicks through random tokens on the overview or the Values &
bits tab. Every 5th click adds a row (Ctrl+click: two rows, the summary table and the Cosine
tab), and the click after it goes back to one row. For each kind of click it prints the median,
90th percentile and largest GUI-thread CPU time per click (the selection call itself counts as
its first turn), and the longest single turn of the event loop. `--tree` measures the window
of another checkout (an A/B of a change).

    python bench/click_cost.py [--model /tmp/gl-real/model] [--tab values] [--clicks 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
BENCH = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="/tmp/gl-real/model")
    parser.add_argument("--tab", choices=("overview", "values"), default="overview")
    parser.add_argument("--clicks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=BENCH.parent, help="the checkout to measure")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree.resolve()))
    sys.path.insert(1, str(BENCH))
    import numpy as np
    from event_loop import timed_click, window_on_model

    app, window = window_on_model(args.model, args.tab, "click-cost-")
    rows = window.state.model.rows
    rng = np.random.default_rng(args.seed)
    ids = rng.choice(rows, min(args.clicks, rows), replace=False).tolist()
    costs: dict[str, list[tuple[float, float]]] = {"one row": [], "two rows": [], "back to one": []}
    for n, token_id in enumerate(ids):
        add = n % 5 == 4
        kind = "two rows" if add else ("back to one" if n % 5 == 0 and n else "one row")
        total, longest = timed_click(app, window, int(token_id), add)
        if n >= 20:  # after the first clicks' one-off work
            costs[kind].append((total, longest))
    print(f"{Path(args.model).name}, {args.tab} tab, tree {args.tree}:")
    for kind, found in costs.items():
        cpu = [c for c, _ in found]
        turn = [t for _, t in found]
        print(
            f"  {kind:11s} (n={len(found):3d}): GUI CPU per click median "
            f"{statistics.median(cpu):5.1f} ms, p90 {np.percentile(cpu, 90):5.1f}, "
            f"max {max(cpu):5.1f}; longest turn median "
            f"{statistics.median(turn):5.1f}, max {max(turn):5.1f}"
        )
    window.close()
    os._exit(0)


if __name__ == "__main__":
    main()
