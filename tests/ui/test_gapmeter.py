"""The gap meter keeps each long gap, when it ended, and the GUI thread's CPU time in it."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from explorer.app.gapmeter import GapMeter


def test_long_gaps_are_kept_with_their_end_and_cpu_time(qtbot):
    meter = GapMeter(5, keep_over_ms=40)
    meter.start()
    blocked: list[float] = []

    def block() -> None:  # the GUI thread waits (sleeps), it does not compute
        blocked.append(time.monotonic())
        time.sleep(0.08)

    QTimer.singleShot(30, block)
    qtbot.wait(250)
    meter.stop()
    assert all(gap_ms > 40 for _, gap_ms, _ in meter.long_gaps)
    # other widgets of the test session may add gaps of their own: this one is the sleep's
    (end, gap_ms, cpu_ms) = next(g for g in meter.long_gaps if blocked[0] < g[0])
    assert end - gap_ms / 1000 <= blocked[0] <= end - 0.08  # the gap holds the whole sleep
    assert gap_ms - cpu_ms >= 75  # and the sleep's time was not CPU time
    meter.reset()
    assert meter.long_gaps == []


def test_without_a_threshold_no_gap_is_kept(qtbot):
    meter = GapMeter(5)
    meter.start()
    QTimer.singleShot(20, lambda: time.sleep(0.06))
    qtbot.wait(150)
    assert meter.stop() >= 60
    assert meter.long_gaps == []
