"""How long the GUI thread is unresponsive: the longest gap between ticks of a fast timer."""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer


def _waits() -> tuple[float, float]:
    """Seconds so far (Linux; else 0): the calling thread's wait for a core (run queue), and the
    time the hypervisor took from this machine's CPUs (steal, all CPUs summed)."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            queued = int(f.read().split()[1]) / 1e9
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        steal = int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0
    return queued, steal


class GapMeter(QObject):
    """Start it on the GUI thread; `max_gap_ms` is the longest time between two timer ticks, and
    `max_gap_cpu_ms` the GUI thread's own CPU time within it (the rest it waited: for a core, for
    the GIL, for the disk). Within the same gap, `max_gap_queued_ms` is how long the thread
    waited for a core and `max_gap_steal_ms` the time the hypervisor took from the machine's
    CPUs (10 ms resolution): the part of a gap that no code of ours can shorten. With
    `keep_over_ms` every gap longer than that is kept in `long_gaps` as (monotonic end, gap ms,
    CPU ms, steal ms), so that a bench can match each one with what else the machine did."""

    def __init__(
        self, interval_ms: int = 5, parent: QObject | None = None, keep_over_ms: float | None = None
    ):
        super().__init__(parent)
        self.keep_over_ms = keep_over_ms
        self.long_gaps: list[tuple[float, float, float, float]] = []
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._last = 0
        self._last_cpu = 0.0
        self._last_waits = (0.0, 0.0)
        self.max_gap_ms = 0.0
        self.max_gap_cpu_ms = 0.0
        self.max_gap_queued_ms = 0.0
        self.max_gap_steal_ms = 0.0
        self.max_gap_end = 0.0  # time.monotonic() at the end of that gap (to match with perf)
        self.ticks = 0

    def start(self) -> None:
        self.reset()
        self.ticks = 0
        self._clock.start()
        self._last = self._clock.nsecsElapsed()
        self._last_cpu = time.thread_time()
        self._last_waits = _waits()
        self._timer.start()

    def stop(self) -> float:
        self._tick()
        self._timer.stop()
        return self.max_gap_ms

    def reset(self) -> None:
        self.max_gap_ms = self.max_gap_cpu_ms = 0.0
        self.max_gap_queued_ms = self.max_gap_steal_ms = 0.0
        self.max_gap_end = 0.0
        self.long_gaps = []

    def _tick(self) -> None:
        # the gap's end on the monotonic clock, read with its length (before the /proc reads):
        # its start, end - gap, is then the previous tick's
        now, end, cpu, waits = (
            self._clock.nsecsElapsed(),
            time.monotonic(),
            time.thread_time(),
            _waits(),
        )
        gap = (now - self._last) / 1e6
        cpu_ms = (cpu - self._last_cpu) * 1000
        steal_ms = (waits[1] - self._last_waits[1]) * 1000
        if self.keep_over_ms is not None and gap > self.keep_over_ms:
            self.long_gaps.append((end, gap, cpu_ms, steal_ms))
        if gap > self.max_gap_ms:
            self.max_gap_ms, self.max_gap_cpu_ms, self.max_gap_steal_ms = gap, cpu_ms, steal_ms
            self.max_gap_queued_ms = (waits[0] - self._last_waits[0]) * 1000
            self.max_gap_end = end
        self._last, self._last_cpu, self._last_waits = now, cpu, waits
        self.ticks += 1


class OtherLoad:
    """CPU time other processes used meanwhile, as a share of the machine (Linux; else 0).
    A timing bound says nothing when other programs take the cores from under the window."""

    def __init__(self):
        self.start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float] | None:
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
        except OSError:
            return None
        tick = os.sysconf("SC_CLK_TCK")
        busy = (sum(fields) - fields[3] - fields[4]) / tick  # all but idle and iowait
        t = os.times()
        return busy, t.user + t.system + t.children_user + t.children_system, time.monotonic()

    def share(self) -> float:
        end = self._sample()
        if self.start is None or end is None:
            return 0.0
        busy = end[0] - self.start[0]
        ours = end[1] - self.start[1]
        wall = end[2] - self.start[2]
        return max(0.0, busy - ours) / (wall * (os.cpu_count() or 1))
