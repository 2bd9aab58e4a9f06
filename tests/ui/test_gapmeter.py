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
    assert len(meter.long_gaps) == 1
    end, gap_ms, cpu_ms = meter.long_gaps[0]
    assert 80 <= gap_ms < 200
    assert cpu_ms < 40
    assert blocked[0] + 0.08 <= end < blocked[0] + 0.2
    meter.reset()
    assert meter.long_gaps == []


def test_without_a_threshold_no_gap_is_kept(qtbot):
    meter = GapMeter(5)
    meter.start()
    QTimer.singleShot(20, lambda: time.sleep(0.06))
    qtbot.wait(150)
    assert meter.stop() >= 60
    assert meter.long_gaps == []
