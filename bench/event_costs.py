"""Where a click's GUI time goes, per Qt event: CPU time by receiver class and event type.

Opens a model in the real main window (1280 x 800, offscreen, no index build) and clicks through
random tokens, one row at a time, on the overview or the Values & bits tab. Every event the GUI
thread delivers is timed (its own CPU time, without the events delivered inside it); a paint of
a plain QWidget (a view's viewport) is named by its parent and the area painted. Prints the
costliest kinds per click. The timing adds its own cost to each event: compare kinds, not sums.

    python bench/event_costs.py [--model /tmp/gl-real/model] [--tab values] [--clicks 120]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from event_loop import wait_until, window_on_model
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication


class TimedApp(QApplication):
    """Times every event it delivers while `on`: CPU time by (receiver, event) kind."""

    def __init__(self, argv: list[str]):
        super().__init__(argv)
        self.on = False
        self._inside: list[float] = []  # CPU time of the events delivered within each level
        self.cpu: collections.Counter[str] = collections.Counter()
        self.count: collections.Counter[str] = collections.Counter()

    def notify(self, receiver, event) -> bool:
        if not self.on:
            return super().notify(receiver, event)
        kind = f"{type(receiver).__name__} {event.type().name}"
        if type(receiver).__name__ == "QWidget" and event.type() == QEvent.Type.Paint:
            area = event.region().boundingRect()
            parent = receiver.parent()
            kind += f" of {type(parent).__name__} {area.width()}x{area.height()}"
        start = time.thread_time()
        self._inside.append(0.0)
        try:
            return super().notify(receiver, event)
        finally:
            spent = time.thread_time() - start
            self.cpu[kind] += spent - self._inside.pop()
            self.count[kind] += 1
            if self._inside:
                self._inside[-1] += spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="/tmp/gl-real/model")
    parser.add_argument("--tab", choices=("overview", "values"), default="overview")
    parser.add_argument("--clicks", type=int, default=120)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    app = TimedApp(sys.argv[:1])
    _, window = window_on_model(args.model, args.tab, "event-costs-")
    import numpy as np

    ids = np.random.default_rng(3).choice(window.state.model.rows, args.clicks, replace=False)
    totals = []
    for n, token_id in enumerate(ids.tolist()):
        measured = n >= 20  # after the first clicks' one-off work
        start = time.thread_time()
        app.on = measured
        window.state.select([int(token_id)])
        wait_until(app, lambda t=int(token_id): [r.id for r in window.viewer.rows] == [t], 60)
        settle = time.monotonic() + 0.15  # the neighbours and the paints that follow
        wait_until(app, lambda s=settle: time.monotonic() > s, 5)
        app.on = False
        if measured:
            totals.append((time.thread_time() - start) * 1000)
    clicks = len(totals)
    print(
        f"{Path(args.model).name}, {args.tab} tab: {clicks} clicks, GUI CPU per click median "
        f"{statistics.median(totals):.1f} ms (timed: the timing's own cost included)"
    )
    for kind, cpu in app.cpu.most_common(args.top):
        print(f"  {cpu / clicks * 1000:6.2f} ms  {app.count[kind] / clicks:5.1f}x  {kind}")
    window.close()
    os._exit(0)


if __name__ == "__main__":
    main()
