"""The gap meter keeps each long gap with what happened in it: when it ended, the GUI thread's
CPU time, the cyclic GC's passes on any thread, the page faults."""

from __future__ import annotations

import gc
import mmap
import threading
import time

import numpy as np

from explorer.app.gapmeter import GapMeter


def block_the_gui_thread(qtbot, meter: GapMeter, block) -> float:
    """Run `block` on the GUI thread between two ticks of the meter; returns when it began."""
    qtbot.waitUntil(lambda: meter.ticks >= 3, timeout=5000)
    ticks = meter.ticks
    began = time.monotonic()
    block()
    qtbot.waitUntil(lambda: meter.ticks > ticks, timeout=5000)
    return began


def gap_after(meter: GapMeter, began: float):
    # other widgets of the test session may add gaps of their own: this one is the block's
    return next(g for g in meter.long_gaps if g.end > began)


def test_long_gaps_are_kept_with_their_end_and_cpu_time(qtbot):
    meter = GapMeter(5, keep_over_ms=40)
    meter.start()
    began = block_the_gui_thread(qtbot, meter, lambda: time.sleep(0.08))  # waits, no CPU
    meter.stop()
    assert all(gap.ms > 40 for gap in meter.long_gaps)
    gap = gap_after(meter, began)
    assert gap.end - gap.ms / 1000 <= began <= gap.end - 0.08  # the gap holds the whole sleep
    assert gap.ms - gap.cpu_ms >= 75  # and the sleep's time was not CPU time
    assert gap.steal_ms >= 0 and gap.gc_ms < 5
    assert meter.longest.ms >= gap.ms
    meter.reset()
    assert meter.long_gaps == [] and meter.max_gap_ms == 0


def test_without_a_threshold_no_gap_is_kept(qtbot):
    meter = GapMeter(5)
    meter.start()
    block_the_gui_thread(qtbot, meter, lambda: time.sleep(0.06))
    assert meter.stop() >= 60
    assert meter.long_gaps == []


def test_a_gc_pass_on_another_thread_is_counted_in_the_gap_it_causes(qtbot):
    """A full pass holds the GIL: the GUI thread waits for it, whichever thread runs it."""
    garbage = [[i] for i in range(600_000)]  # tracked containers, not frozen: a long pass
    passes: list[float] = []

    def collect() -> None:
        t = time.perf_counter()
        gc.collect()
        passes.append((time.perf_counter() - t) * 1000)

    meter = GapMeter(5, keep_over_ms=10)
    meter.start()

    def on_a_worker() -> None:
        worker = threading.Thread(target=collect)
        worker.start()
        worker.join()

    began = block_the_gui_thread(qtbot, meter, on_a_worker)
    meter.stop()
    del garbage
    gap = gap_after(meter, began)
    assert passes[0] > 10
    assert passes[0] * 0.8 <= gap.gc_ms <= gap.ms + 1, (passes, gap)


def test_page_faults_in_a_gap_are_counted(qtbot):
    meter = GapMeter(5, keep_over_ms=0)
    meter.start()
    fresh = mmap.mmap(-1, 32 << 20)  # new anonymous pages (malloc might hand out used ones)

    def touch() -> None:
        np.frombuffer(fresh, np.uint8)[:] = 1

    began = block_the_gui_thread(qtbot, meter, touch)
    meter.stop()
    # 32 MB of fresh pages: 8192 faults of 4 KB, or 16 of 2 MB (transparent huge pages)
    assert gap_after(meter, began).faults >= 10
    fresh.close()
