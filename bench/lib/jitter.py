"""How steady is this machine's CPU? A fixed piece of Python work (~5 ms) timed again and again.

On a quiet desktop it takes the same time every run. On a shared virtual machine the same work
sometimes takes 2-4x longer (the host runs other guests on the same core): every GUI-thread turn
that happens then is that much longer too, whatever the app does. gui_latency.py prints this
next to its figures, so that a rare long gap can be told apart from a slow turn of ours.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass


def _work() -> int:
    s = 0
    for i in range(60_000):
        s += i * i
    return s


@dataclass(frozen=True)
class Jitter:
    runs: int
    median_ms: float
    p999_ms: float
    max_ms: float
    slow_runs: int  # runs that took over twice the median

    def __str__(self) -> str:
        return (
            f"the same {self.median_ms:.1f} ms of Python took up to {self.max_ms:.1f} ms "
            f"(99.9th percentile {self.p999_ms:.1f}); {self.slow_runs} of {self.runs} runs "
            "over twice the median"
        )


def measure(seconds: float = 10.0) -> Jitter:
    times: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        _work()
        times.append((time.perf_counter() - t) * 1000)
        time.sleep(0.002)
    times.sort()
    median = statistics.median(times)
    return Jitter(
        runs=len(times),
        median_ms=median,
        p999_ms=times[min(len(times) - 1, int(len(times) * 0.999))],
        max_ms=times[-1],
        slow_runs=sum(t > 2 * median for t in times),
    )
