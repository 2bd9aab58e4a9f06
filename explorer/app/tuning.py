"""Process-wide tuning for the window, in one place: call `tune_process()` once at start-up.

* The GIL switch interval: a worker running Python holds the GIL for up to this long before
  the GUI thread, which gives it up on every call into Qt, gets it back (CPython: 5 ms).
* The cyclic GC: everything alive once the app has started (modules, numba's compiler state)
  lives as long as the app, and what a model brings (its vocabulary) as long as the model;
  `freeze_long_lived()`, after the start and after each open, keeps it out of full GC passes,
  which would otherwise take 60-100 ms and, run from any thread, freeze the window that long.
  The GC is off while the app starts (`gc_off_while_starting`): the imports of Qt, pyqtgraph and
  numba made it run 3-4 full passes over those same objects, ~200 ms in all, collecting a few.
* numba's thread count is per thread: each job worker leaves one core for the window
  (`tune_worker_thread`, called by the job layer before every job). BLAS, whose threads spin
  while they wait for work, gets the same limit for the whole process (`tune_process`).
* The errand thread (settings writes, reaping an old child) starts here, not on the GUI thread
  later: starting a thread waits for it to run (`explorer/app/errands.py`).
* numba's start (its CPU target, the scan kernels from its cache: ~0.7 s, much of it holding
  the GIL; seconds on a frozen app's first launch, which unpacks LLVM) waits until the window
  has drawn its first frame, then runs on the warm-up worker (`start_kernels`): the window may
  stutter for ~120 ms at a time while it imports, but it is on screen at once.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from explorer.app import errands

GIL_SWITCH_INTERVAL = 0.0005  # seconds

_tuned = False


def tune_process() -> None:
    """Idempotent; called by the GUI entry point (and the UI test session)."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL))
    errands.start_threads()
    limit_blas_threads()
    freeze_long_lived()  # the start-up's ~240k objects: full passes took 60-80 ms as a model opened


@contextmanager
def gc_off_while_starting() -> Iterator[None]:
    """Around the GUI's imports and `tune_process`, which freezes what they made: the GC is
    off until then (unless the process is tuned already or had it off)."""
    if _tuned or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def start_kernels() -> None:
    """Start numba and load the search kernels (a job for the warm-up worker, after the window's
    first frame): a search that comes first loads them on its own worker."""
    from explorer.core.search import exact as search_exact

    search_exact.warm_up()


def limit_blas_threads() -> None:
    """BLAS on a job worker (the explain product, the head's logits, PCA) leaves one core for
    the window: the libraries loaded now through threadpoolctl, later ones by the environment."""
    from threadpoolctl import threadpool_limits

    threads = worker_threads()
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(threads))
    threadpool_limits(limits=threads, user_api="blas")


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic GC's reach (after a model has opened)."""
    gc.freeze()


def worker_threads() -> int:
    """numba threads for one job: one core fewer than the machine has."""
    return max(1, (os.cpu_count() or 2) - 1)


def tune_worker_thread() -> None:
    """numba's parallel kernels, started from this thread, leave a core for the window."""
    numba = sys.modules.get("numba")
    # None: nothing compiled with numba runs before the search modules import it. No config or
    # set_num_threads yet: another thread is importing it right now (this job's kernels, if
    # any, then run with numba's default; the thread's next job tunes it).
    config = getattr(numba, "config", None)
    set_threads = getattr(numba, "set_num_threads", None)
    if config is None or set_threads is None:
        return
    # numba.config sets NUMBA_NUM_THREADS at import time through globals(), unseen by mypy
    threads: int = config.NUMBA_NUM_THREADS
    set_threads(max(1, min(threads, worker_threads())))


BACKGROUND_NICE = 10  # children that build or load in the background: the window comes first


def lower_thread_priority(nice: int) -> None:
    """Raise the calling thread's niceness to at least `nice` (Linux: niceness is per thread;
    threads it starts, such as numba's pool, inherit it). Elsewhere a no-op."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), nice))
    except (AttributeError, OSError):
        pass


# glibc malloc in a background child: blocks up to 32 MB (its maximum) come from the heap, and
# freed heap memory is kept for the next block instead of going back to the kernel. Pages handed
# out and taken back by the gigabyte stall the window's thread on a VM, even from another process
# (docs/responsiveness.md, "the rare slow click").
KEEP_FREED_MEMORY = {
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
}


def background_env(threads: int | None = None) -> dict[str, str]:
    """Environment for a background child: its thread pools have `threads` threads (default:
    one core left for the window), and it reuses the memory it frees."""
    count = str(threads or worker_threads())
    pools = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    env = dict(os.environ, PYTHONUNBUFFERED="1", RAYON_NUM_THREADS=count)
    env.update({name: count for name in pools})
    env.update(KEEP_FREED_MEMORY)
    return env


def lower_priority() -> None:
    """In a child process: run at niceness BACKGROUND_NICE at least (os.nice). (Only a separate
    process may be niced: a niced thread of the app itself would hold the GIL longer and stall
    the window.)"""
    if hasattr(os, "nice"):
        os.nice(max(0, BACKGROUND_NICE - os.nice(0)))
