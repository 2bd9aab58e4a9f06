"""How long the window takes to quit: from closing it to the end of the process.

    python bench/quit_time.py [--after 1,4,10] [--rounds 3] [--model PATH]

Starts `embedding-explorer gui` (on the demo model unless --model) in a child process with the
offscreen platform (or the real display if DISPLAY is set and --offscreen is not given), closes
the window `--after` seconds after start-up (early: the layout warm-up and the first jobs are
still running; late: everything idle), and measures from the close to the child's exit, which
includes the interpreter's shutdown (joining threads, thread pools, atexit handlers). Goal: 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CHILD = """\
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])

def close_window():
    for w in QApplication.topLevelWidgets():
        if w.isVisible() and w.isWindow():
            print(f"CLOSE {time.time():.6f}", flush=True)
            w.close()  # runs closeEvent: saves settings, cancels and waits for the job lanes
            print(f"CLOSED {time.time():.6f}", flush=True)
            return

QTimer.singleShot(int(float(sys.argv[1]) * 1000), close_window)
import explorer.cli
sys.exit(explorer.cli.main(["gui", *sys.argv[2:]]))
"""


def one_run(after: float, model: list[str], env: dict) -> tuple[float, float]:
    """(close → closeEvent done, close → process gone) in seconds."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(after), *model],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    out, err = proc.communicate(timeout=after + 120)
    gone = time.time()
    stamps = dict(line.split() for line in out.splitlines() if line.startswith("CLOSE"))
    if proc.returncode != 0 or "CLOSE" not in stamps:
        sys.exit(f"child failed ({proc.returncode}):\n{err}")
    close = float(stamps["CLOSE"])
    return float(stamps["CLOSED"]) - close, gone - close


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--after", default="1,4,10", help="seconds after start to close, listed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", help="model to open (default: the demo)")
    ap.add_argument("--offscreen", action="store_true", help="even if DISPLAY is set")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.offscreen or not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        env["QT_QPA_PLATFORM"] = "offscreen"
    platform = env.get("QT_QPA_PLATFORM") or "display " + env.get("DISPLAY", "?")
    model = [args.model] if args.model else []
    print(f"machine: {os.cpu_count()} cores; Qt platform: {platform}")
    for after in (float(a) for a in args.after.split(",")):
        loop, total = zip(*(one_run(after, model, env) for _ in range(args.rounds)), strict=True)
        load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        print(
            f"closed {after:4.1f} s after start: closeEvent done after "
            f"{statistics.median(loop):.2f} s, process gone after {statistics.median(total):.2f} s"
            f" (median of {args.rounds}; max {max(total):.2f} s; {load})"
        )


if __name__ == "__main__":
    main()
