"""The gap meter keeps each long gap, when it ended, and the GUI thread's CPU time in it."""

from __future__ import annotations

import time

from explorer.app.gapmeter import GapMeter


def block_the_gui_thread(qtbot, meter: GapMeter, seconds: float) -> float:
    """Sleep on the GUI thread between two ticks of the meter; returns when the sleep began."""
    qtbot.waitUntil(lambda: meter.ticks >= 3, timeout=5000)
    ticks = meter.ticks
    began = time.monotonic()
    time.sleep(seconds)  # the GUI thread waits, it does not compute
    qtbot.waitUntil(lambda: meter.ticks > ticks, timeout=5000)
    return began


def test_long_gaps_are_kept_with_their_end_and_cpu_time(qtbot):
    meter = GapMeter(5, keep_over_ms=40)
    meter.start()
    began = block_the_gui_thread(qtbot, meter, 0.08)
    meter.stop()
    assert all(gap_ms > 40 for _, gap_ms, _, _ in meter.long_gaps)
    # other widgets of the test session may add gaps of their own: this one is the sleep's
    end, gap_ms, cpu_ms, steal_ms = next(g for g in meter.long_gaps if g[0] > began)
    assert end - gap_ms / 1000 <= began <= end - 0.08  # the gap holds the whole sleep
    assert gap_ms - cpu_ms >= 75  # and the sleep's time was not CPU time
    assert steal_ms >= 0
    meter.reset()
    assert meter.long_gaps == []


def test_without_a_threshold_no_gap_is_kept(qtbot):
    meter = GapMeter(5)
    meter.start()
    block_the_gui_thread(qtbot, meter, 0.06)
    assert meter.stop() >= 60
    assert meter.long_gaps == []
