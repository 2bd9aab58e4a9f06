"""The window's start as a whole process: time to the first frame on an X server, and
`embedding-explorer gui resources/demo --screenshot`.

    python bench/gui_startup.py --first-frame [--rounds 5] [--python /tmp/fresh/bin/python]
    python bench/gui_startup.py [--rounds 9] [--tree OTHER_CHECKOUT]

--first-frame starts the installed entry point (`python -m explorer`, no arguments: the demo
on a first launch, with a fresh HOME each round) on a private Xvfb, beside a bare PySide6
window (`QApplication` + `QMainWindow.show()`), in interleaved rounds, and reports when each
window became viewable as the X server sees it: the splash (the first window), and the main
window. Goal: a window within 3 s. With --python, both sides run with another interpreter,
e.g. a fresh venv with `pip install .` (run it with PYTHONPATH unset).

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

from lib.first_frame import time_to_windows, xvfb
from lib.processes import interleaved, load

BARE_WINDOW = """\
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
window = QMainWindow()
window.setWindowTitle("bare PySide6")
window.resize(1280, 800)
window.show()
app.exec()
"""


def first_frame(rounds: int, py: str) -> None:
    app = "Embedding Explorer"
    commands = {
        "bare PySide6 window": (
            [py, "-c", BARE_WINDOW],
            {"window": lambda t: t == "bare PySide6"},
        ),
        "embedding-explorer (python -m explorer)": (
            [py, "-m", "explorer"],
            {
                "first window": lambda t: app in t,
                "main window": lambda t: app in t and not t.endswith("(starting)"),
            },
        ),
    }
    times: dict[str, dict[str, list[float]]] = {n: {} for n in commands}
    print(f"time to a viewable window on Xvfb, {py}, {rounds} interleaved rounds ({load()} before)")
    with xvfb() as display:
        for cmd, wanted in commands.values():  # untimed: page cache, .pyc files
            time_to_windows(cmd, display, wanted)
        for r in range(rounds):
            order = list(commands.items())
            for name, (cmd, wanted) in order[::-1] if r % 2 else order:
                for what, t in time_to_windows(cmd, display, wanted).items():
                    times[name].setdefault(what, []).append(t)
    floor = statistics.median(times["bare PySide6 window"]["window"])
    for name, parts in times.items():
        for what, ts in parts.items():
            med = statistics.median(ts)
            print(
                f"  {name:<40} {what:<13} median {med:6.3f} s  min {min(ts):6.3f}  "
                f"max {max(ts):6.3f}  ({med / floor:.2f}x the bare window; goal <= 3 s)"
            )
    print(f"  ({load()} after)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--tree", type=Path, help="another checkout to compare with")
    ap.add_argument("--first-frame", action="store_true", help="time to the first frame on Xvfb")
    ap.add_argument("--python", default=sys.executable, help="interpreter (with --first-frame)")
    args = ap.parse_args()
    if args.first_frame:
        first_frame(args.rounds, args.python)
        return
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
