"""How long the GUI thread is unresponsive: the longest gap between ticks of a fast timer, and
how much of the machine other processes took meanwhile."""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass
from typing import NamedTuple

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer

try:
    import resource

    THREAD_RUSAGE = hasattr(resource, "RUSAGE_THREAD")  # Linux
except ImportError:  # Windows
    THREAD_RUSAGE = False


def _thread_waits() -> tuple[float, float]:
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


class GcClock:
    """Total time the process has spent in cyclic GC passes, on any thread, while at least one
    meter runs (each pass holds the GIL throughout: every other thread waits for it)."""

    total = 0.0
    _users = 0
    _began = 0.0

    @classmethod
    def _note(cls, phase: str, _info: dict) -> None:
        now = time.perf_counter()
        if phase == "start":
            cls._began = now
        else:
            cls.total += now - cls._began

    @classmethod
    def use(cls) -> None:
        if cls._users == 0:
            gc.callbacks.append(cls._note)
        cls._users += 1

    @classmethod
    def release(cls) -> None:
        cls._users -= 1
        if cls._users == 0:
            gc.callbacks.remove(cls._note)


@dataclass(frozen=True)
class Gap:
    """One stretch between two ticks of the meter's timer, and what happened within it."""

    end: float  # time.monotonic() at its end (its start is end - ms / 1000)
    ms: float
    cpu_ms: float  # the GUI thread's own CPU time; the rest it waited (a core, the GIL, a disk)
    queued_ms: float  # its wait for a core (the run queue)
    steal_ms: float  # time the hypervisor took from the machine's CPUs (10 ms resolution)
    gc_ms: float  # cyclic GC passes on any thread of the process
    faults: int  # page faults the GUI thread took (each may read the disk or clear a page)


NO_GAP = Gap(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)


class _Sample(NamedTuple):
    nsecs: int
    monotonic: float
    cpu: float
    queued: float
    steal: float
    gc: float
    faults: int

    @classmethod
    def now(cls, clock: QElapsedTimer) -> _Sample:
        # the gap's end and length first, then what takes longer to read
        nsecs, monotonic, cpu = clock.nsecsElapsed(), time.monotonic(), time.thread_time()
        use = resource.getrusage(resource.RUSAGE_THREAD) if THREAD_RUSAGE else None
        faults = use.ru_minflt + use.ru_majflt if use else 0
        return cls(nsecs, monotonic, cpu, *_thread_waits(), GcClock.total, faults)

    def gap_since(self, last: _Sample) -> Gap:
        return Gap(
            end=self.monotonic,
            ms=(self.nsecs - last.nsecs) / 1e6,
            cpu_ms=(self.cpu - last.cpu) * 1000,
            queued_ms=(self.queued - last.queued) * 1000,
            steal_ms=(self.steal - last.steal) * 1000,
            gc_ms=(self.gc - last.gc) * 1000,
            faults=self.faults - last.faults,
        )


class GapMeter(QObject):
    """Start it on the GUI thread; `longest` is the longest gap between two timer ticks since
    the start or the last reset (`max_gap_ms` its length), with what happened within it: the
    GUI thread's own CPU time, its wait for a core, the hypervisor's steal (the part that no code
    of ours can shorten), the GC's passes and the page faults; `max_cpu_ms` the most CPU time
    the GUI thread spent between two ticks. With `keep_over_ms`, every gap longer than that is
    kept in `long_gaps`, so that a bench can match each one with what else the machine did."""

    def __init__(self, interval_ms: int = 5, keep_over_ms: float | None = None):
        super().__init__()
        self.keep_over_ms = keep_over_ms
        self.long_gaps: list[Gap] = []
        self.longest = NO_GAP
        self.max_cpu_ms = 0.0
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._clock.start()
        self._last = _Sample.now(self._clock)

    @property
    def max_gap_ms(self) -> float:
        return self.longest.ms

    def start(self) -> None:
        self.reset()
        if not self.timer.isActive():
            GcClock.use()
        self._last = _Sample.now(self._clock)
        self.timer.start()

    def stop(self) -> float:
        if self.timer.isActive():
            self._tick()
            self.timer.stop()
            GcClock.release()
        return self.max_gap_ms

    def reset(self) -> None:
        self.longest = NO_GAP
        self.max_cpu_ms = 0.0
        self.long_gaps = []

    def _tick(self) -> None:
        sample = _Sample.now(self._clock)
        gap = sample.gap_since(self._last)
        if self.keep_over_ms is not None and gap.ms > self.keep_over_ms:
            self.long_gaps.append(gap)
        if gap.ms > self.longest.ms:
            self.longest = gap
        self.max_cpu_ms = max(self.max_cpu_ms, gap.cpu_ms)
        self._last = sample


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
