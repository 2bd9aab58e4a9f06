"""Is the machine itself slow right now? A canary process beside a bench, timing a fixed job.

A separate process (not the window's) runs a fixed memory-bound job (arithmetic over 4 MB, ~1 ms)
every 20 ms and records when it ran and how much CPU time it took on its own thread. A job that
takes several times its usual CPU time was slowed by the machine (on a shared VM: the host),
not given more work: it is always the same job. A bench asks, for a gap it measured, how much
slower than usual the canary's jobs ran within that gap (`Canary.slowdown(start, end)`).

Where the kernel reports free pages to the hypervisor (virtio-balloon free page reporting, with
its counter, see page_cache.py), the canary also records that counter after each job: on the
reference VM, whenever the guest frees a lot of memory (evicting a 2 GB file from the page cache,
a process ending), a reporting pass hands 384 MiB back to the host every ~2.2 s until all of it
is reported, and the canary's jobs run 10-30x slower during some of those passes.
`Canary.reported_mib(start, end)` says how much was reported within a gap.
"""

from __future__ import annotations

import array
import bisect
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lib.page_cache import reported_kib

PERIOD = 0.02  # seconds between the starts of two jobs
BENCH = Path(__file__).resolve().parents[1]


def memory_job(passes: int) -> Callable[[], None]:
    """A fixed memory-bound job: `passes` times arithmetic over the same 4 MB (each pass
    here: ~0.6 ms), like painting a window's backing store."""
    import numpy as np

    a = np.linspace(0.0, 1.0, 512 * 1024)  # 4 MB
    b = np.empty_like(a)

    def job() -> None:
        for _ in range(passes):
            np.multiply(a, 0.5, out=b)
            np.add(b, 0.25, out=a)

    return job


def run_jobs(out: Path, seconds: float) -> None:
    job = memory_job(2)
    reported = reported_kib()
    end = time.monotonic() + seconds
    parent = os.getppid()
    with open(out, "ab", buffering=0) as f:
        while time.monotonic() < end and os.getppid() == parent:  # ends with its bench
            start, cpu = time.monotonic(), time.thread_time()
            job()
            # a record: monotonic start and end, the thread CPU seconds it took, and the KiB
            # reported to the hypervisor by then
            took = time.thread_time() - cpu
            f.write(array.array("d", (start, time.monotonic(), took, reported())))
            time.sleep(max(0.0, start + PERIOD - time.monotonic()))


class Canary:
    """The canary process, started with `start()`, ended with `stop()`; then its records."""

    def __init__(self, seconds: float = 7200.0):
        self.seconds = seconds
        self.path = Path(tempfile.mkstemp(prefix="canary-", suffix=".bin")[1])
        self.proc: subprocess.Popen | None = None
        self.jobs: list[tuple[float, float, float]] = []  # start, end, CPU seconds
        self.reported: list[float] = []  # KiB reported to the hypervisor by each job's end
        self.median_cpu = 0.0

    def start(self) -> None:
        # run from bench/, as `python -m`, to import lib.page_cache as the bench does
        cmd = [sys.executable, "-m", "lib.canary", str(self.path), str(self.seconds)]
        self.proc = subprocess.Popen(cmd, cwd=BENCH)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        data = self.path.read_bytes()  # a record cut short by the kill is left out
        values = array.array("d", data[: len(data) // 32 * 32])
        self.path.unlink(missing_ok=True)
        self.jobs = [tuple(values[i : i + 3]) for i in range(0, len(values), 4)]  # type: ignore[misc]
        self.reported = list(values[3::4])
        self.median_cpu = statistics.median(j[2] for j in self.jobs) if self.jobs else 0.0

    def slow_jobs(self, start: float, end: float, times: float) -> int:
        """How many jobs that ran within [start, end] took `times` their median CPU time or more."""
        limit = times * self.median_cpu
        return sum(cpu >= limit for s, e, cpu in self.jobs if e >= start and s <= end)

    def slowdown(self, start: float, end: float) -> float:
        """The slowest job that ran within [start, end] (monotonic seconds), as a multiple of
        the median job's CPU time; 0 if none ran then."""
        within = [cpu for s, e, cpu in self.jobs if e >= start and s <= end]
        return max(within) / self.median_cpu if within and self.median_cpu else 0.0

    @property
    def sees_reporting(self) -> bool:
        """The kernel counts the free memory it reports to the hypervisor (after `stop()`)."""
        return bool(self.reported) and self.reported[0] >= 0

    def reported_mib(self, start: float, end: float) -> float:
        """MiB of free memory the kernel reported to the hypervisor within [start, end], as seen
        after the jobs around it (-1 where the kernel does not say)."""
        ends = [e for _, e, _ in self.jobs]
        first = max(0, bisect.bisect_left(ends, start) - 1)
        last = min(len(ends) - 1, bisect.bisect_left(ends, end))
        if last < first or self.reported[last] < 0:
            return -1.0
        return (self.reported[last] - self.reported[first]) / 1024


if __name__ == "__main__":  # the canary process itself
    run_jobs(Path(sys.argv[1]), float(sys.argv[2]))
