"""The window's start as a whole process: `embedding-explorer gui resources/demo --screenshot`.

    python bench/gui_startup.py [--rounds 9] [--tree OTHER_CHECKOUT]

The screenshot command does what a start does before the window can be used (imports, process
tuning, opening the demo, building and painting the window) and then ends, so its wall time is
the start's. With --tree, the same command also with another checkout's package (on
PYTHONPATH), in interleaved rounds against the installed one (A/B). Wall time moves with other
load on the machine; the process's CPU time is printed beside it, and moves far less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from lib.processes import interleaved, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tree", type=Path, help="another checkout to compare with")
    args = ap.parse_args()
    from explorer.core.resources import demo_model_dir

    trees: dict[str, Path | None] = {"installed": None}
    if args.tree:
        trees[str(args.tree)] = args.tree.resolve()
    demo = demo_model_dir()
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    with tempfile.TemporaryDirectory(prefix="ee-gui-start-") as tmp:
        cmd = [sys.executable, "-m", "explorer", "gui", str(demo), "--screenshot"]
        cmd.append(str(Path(tmp) / "shot.png"))
        print(f"gui --screenshot on the demo, {args.rounds} interleaved rounds ({load()} before)")
        times = interleaved(dict.fromkeys(trees, cmd), args.rounds, Path(tmp), trees)
    for name, ts in times.items():
        wall = [w for w, _ in ts]
        cpu = [c for _, c in ts]
        print(
            f"  {name:<40} median {statistics.median(wall):6.3f} s  min {min(wall):6.3f} s"
            f"  CPU median {statistics.median(cpu):6.3f} s"
        )
    print(f"  ({load()} after)")


if __name__ == "__main__":
    main()
