"""Background work in job lanes: one lane per kind of work, the latest request wins.

How a pane plugs in (all calls on the GUI thread)::

    lane = state.jobs.lane("projection")          # created on first use; any name works
    lane.submit(work, arg1, arg2, label="UMAP of 500 tokens",
                on_result=self._show,    # called on the GUI thread with work's return value
                on_error=None)           # optional; default: the lane's `failed` signal,
                                         # which the window shows in the status bar

* ``work`` runs on the lane's own worker thread. It is a plain function or a generator function.
  A generator yields progress as a float 0..1 or a ``(text, fraction)`` pair and *returns* its
  result (``return coords``); the lane stops it at the next ``yield`` once it is cancelled.
  Long plain functions can poll :func:`cancel_flag` (a ``threading.Event`` for the running job:
  ``cancel_flag().is_set()``; or call :func:`check_cancelled`, which raises ``Cancelled``) and
  may report progress with :func:`report_progress`.
* Build immutable inputs on the GUI thread (ids, text, the model object) and pass them as
  arguments; never touch a widget from ``work``.
* Each ``submit`` cancels the lane's previous job and bumps ``lane.generation``; results,
  progress and errors of older generations are dropped on arrival, so ``on_result`` only ever
  sees the answer to the latest request.
* ``ExplorerError`` becomes its message, any other exception a one-line message (the
  traceback goes to stderr); ``Cancelled`` is silent. Nothing a job raises crashes the window.
* ``Jobs`` (``state.jobs``) owns every lane: ``busy``/``idle`` (all lanes done, results
  delivered), ``activity`` (text, fraction) for the status bar, ``cancel_all()`` and
  ``shutdown()`` (cancel and wait; the window calls it on close).
* Lanes run in parallel; within a lane one job runs at a time, so a cancelled job that is still
  running delays the next one until it reaches a ``yield`` or checks its flag.
* A worker thread shares the GIL with the window: a C call that holds it for long (LAPACK in
  ``numpy.linalg.qr``, ``tokenizers.Tokenizer.encode``; ``encode_batch`` releases it) freezes
  the window however it is scheduled. Run such work in a child process
  (explorer/app/index_process.py does this for the fast neighbour index).
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from explorer.core.errors import Cancelled, ExplorerError

LANES = ("model", "levels", "vocab", "lookup", "tokenize", "neighbors", "index", "projection")

_local = threading.local()
_running_lock = threading.Lock()
_running = 0  # workers inside run(), over every lane (tests assert it is 0 after each test)
_PROGRESS_INTERVAL = 0.05  # seconds between progress signals of one job
# A worker running Python holds the GIL for up to this long before the GUI thread, which gives
# the GIL up on every call into Qt, gets it back (CPython's default is 5 ms).
GIL_SWITCH_INTERVAL = 0.0005


def use_short_gil_switch_interval() -> None:
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL))


def running_workers() -> int:
    """Number of job functions executing right now in any lane (cancelled ones included)."""
    with _running_lock:
        return _running


def cancel_flag() -> threading.Event:
    """The cancel event of the job running on this thread (a never-set event outside jobs)."""
    job = getattr(_local, "job", None)
    return job.cancel if job is not None else threading.Event()


def check_cancelled() -> None:
    if cancel_flag().is_set():
        raise Cancelled()


def report_progress(fraction: float, text: str = "") -> None:
    """Progress from inside a plain (non-generator) job function; ignored outside jobs."""
    job = getattr(_local, "job", None)
    if job is not None:
        job.progress(text, fraction)


def error_message(exc: BaseException) -> str:
    if isinstance(exc, ExplorerError):
        return str(exc)
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class _Job(QRunnable):
    """One request. Runs `work` on a worker thread, reports back through the lane's signals."""

    def __init__(self, lane: JobLane, generation: int, work: Callable, args: tuple, kwargs: dict):
        super().__init__()
        self.setAutoDelete(False)  # the lane keeps a reference until it is done
        self.lane = lane
        self.generation = generation
        self.work = work
        self.args = args
        self.kwargs = kwargs
        self.cancel = threading.Event()
        self._last_progress = 0.0

    def progress(self, text: str, fraction: float) -> None:
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_INTERVAL or fraction >= 1.0:
            self._last_progress = now
            self.lane._progress_out.emit(self.generation, text, float(fraction))

    def _execute(self) -> Any:
        if inspect.isgeneratorfunction(self.work):
            gen = self.work(*self.args, **self.kwargs)
            try:
                while True:
                    if self.cancel.is_set():
                        gen.close()
                        raise Cancelled()
                    item = next(gen)
                    if isinstance(item, tuple):
                        self.progress(str(item[0]), float(item[1]))
                    elif isinstance(item, int | float):
                        self.progress("", float(item))
            except StopIteration as stop:
                return stop.value
        return self.work(*self.args, **self.kwargs)

    def run(self) -> None:  # worker thread
        global _running
        with _running_lock:
            _running += 1
        _local.job = self
        outcome, payload = "cancelled", None
        try:
            if not self.cancel.is_set():
                payload = self._execute()
                outcome = "cancelled" if self.cancel.is_set() else "result"
        except Cancelled:
            outcome = "cancelled"
        except Exception as e:  # a job must never take the window down
            if self.cancel.is_set():
                outcome = "cancelled"
            else:
                outcome, payload = "error", error_message(e)
                if not isinstance(e, ExplorerError):
                    traceback.print_exc(file=sys.stderr)
        finally:
            _local.job = None
            # Drop references to big inputs before the GUI thread hears about it.
            self.work, self.args, self.kwargs = None, (), {}  # type: ignore[assignment]
            with _running_lock:
                _running -= 1  # before the GUI thread can hear about it: nothing is left to do
            self.lane._done_out.emit(self.generation, outcome, payload)


class JobLane(QObject):
    """One kind of work. Lives on the GUI thread; its jobs run on its own single worker thread."""

    started = Signal(str)  # label of the job that became current
    progress = Signal(str, float)  # text, fraction 0..1 (negative: unknown)
    failed = Signal(str)  # message of an error no on_error handled
    finished = Signal()  # the latest job ended (result, error or cancel)
    busyChanged = Signal(bool)

    # Private: emitted from the worker thread, delivered queued on the GUI thread.
    _progress_out = Signal(int, str, float)
    _done_out = Signal(int, str, object)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self.generation = 0
        self.label = ""
        self.fraction = -1.0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._jobs: dict[int, _Job] = {}  # submitted and not yet reported back
        self._handlers: dict[int, tuple[Callable | None, Callable | None, Callable | None]] = {}
        self._current: int | None = None  # generation whose result is still awaited
        self._closed = False
        self._progress_out.connect(self._on_progress)
        self._done_out.connect(self._on_done)

    # -- public ----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while the latest request has not been answered or any job is still running."""
        return bool(self._jobs)

    def submit(
        self,
        work: Callable,
        *args: Any,
        label: str = "",
        on_result: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_progress: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> int:
        """Cancel the previous job and start `work(*args, **kwargs)`; returns its generation."""
        if self._closed:
            return self.generation
        was_busy = self.busy
        self._cancel_jobs()
        self.generation += 1
        gen = self.generation
        job = _Job(self, gen, work, args, kwargs)
        self._jobs[gen] = job
        self._handlers[gen] = (on_result, on_error, on_progress)
        self._current = gen
        self.label = label or self.name
        self.fraction = -1.0
        self._pool.start(job)
        self.started.emit(self.label)
        if not was_busy:
            self.busyChanged.emit(True)
        return gen

    def cancel(self) -> None:
        """Cancel the current job; its result will be dropped."""
        if self._current is None:
            return
        self._current = None
        self._cancel_jobs()
        self.finished.emit()

    def wait(self, msecs: int = -1) -> bool:
        """Block until no job of this lane runs (results are delivered later by the event loop)."""
        return self._pool.waitForDone(msecs)

    def shutdown(self, msecs: int = 5000) -> bool:
        self._closed = True
        self._current = None
        self._cancel_jobs()
        return self.wait(msecs)

    # -- internals ---------------------------------------------------------------------------
    def _cancel_jobs(self) -> None:
        for gen, job in list(self._jobs.items()):
            job.cancel.set()
            if self._pool.tryTake(job):  # never started: forget it now
                del self._jobs[gen]
                self._handlers.pop(gen, None)

    @Slot(int, str, float)
    def _on_progress(self, gen: int, text: str, fraction: float) -> None:
        if gen != self._current:
            return
        self.fraction = fraction
        on_progress = self._handlers.get(gen, (None, None, None))[2]
        if on_progress is not None:
            on_progress(text, fraction)
        self.progress.emit(text, fraction)

    @Slot(int, str, object)
    def _on_done(self, gen: int, outcome: str, payload: object) -> None:
        self._jobs.pop(gen, None)
        on_result, on_error, _ = self._handlers.pop(gen, (None, None, None))
        if gen == self._current:
            self._current = None
            try:
                if outcome == "result" and on_result is not None:
                    on_result(payload)
                elif outcome == "error":
                    if on_error is not None:
                        on_error(str(payload))
                    else:
                        self.failed.emit(str(payload))
            except Exception as e:  # a broken handler is a bug, but must not kill the window
                traceback.print_exc(file=sys.stderr)
                self.failed.emit(error_message(e))
            self.finished.emit()
        if not self._jobs:
            self.busyChanged.emit(False)


class Jobs(QObject):
    """Every lane of the application, plus the aggregate state the status bar shows."""

    idle = Signal()  # every lane has answered its latest request and no worker runs
    busyChanged = Signal(bool)
    activity = Signal(str, float)  # label of the newest running job, fraction (<0: unknown)
    failed = Signal(str, str)  # lane name, message

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        use_short_gil_switch_interval()
        self._lanes: dict[str, JobLane] = {}
        self._order: list[str] = []  # most recently started lane last
        self._busy = False
        for name in LANES:
            self.lane(name)

    def lane(self, name: str) -> JobLane:
        lane = self._lanes.get(name)
        if lane is None:
            lane = JobLane(name, self)
            # All lane signals are emitted on the GUI thread, so plain callables are safe here.
            lane.started.connect(lambda *_, ln=lane: self._on_started(ln))
            lane.progress.connect(lambda *_, ln=lane: self._on_change(ln))
            lane.finished.connect(lambda *_, ln=lane: self._on_change(ln))
            lane.busyChanged.connect(lambda *_, ln=lane: self._on_change(ln))
            lane.failed.connect(lambda msg, ln=lane: self.failed.emit(ln.name, msg))
            self._lanes[name] = lane
        return lane

    @property
    def lanes(self) -> dict[str, JobLane]:
        return dict(self._lanes)

    @property
    def busy(self) -> bool:
        return any(lane.busy for lane in self._lanes.values())

    def current(self) -> tuple[str, float] | None:
        """(label, fraction) of the most recently started lane that is still working."""
        for lane in sorted(self._lanes.values(), key=self._recency, reverse=True):
            if lane._current is not None:
                return lane.label, lane.fraction
        return None

    def cancel_all(self) -> None:
        for lane in self._lanes.values():
            lane.cancel()

    def shutdown(self, msecs: int = 5000) -> bool:
        """Cancel every lane and wait for its worker; call on close."""
        ok = True
        for lane in self._lanes.values():
            ok = lane.shutdown(msecs) and ok
        return ok

    def _recency(self, lane: JobLane) -> int:
        return self._order.index(lane.name) if lane.name in self._order else -1

    def _on_started(self, lane: JobLane) -> None:
        if lane.name in self._order:
            self._order.remove(lane.name)
        self._order.append(lane.name)
        self._on_change(lane)

    def _on_change(self, lane: JobLane) -> None:
        cur = self.current()
        self.activity.emit(*(cur if cur else ("", -1.0)))
        busy = self.busy
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
            if not busy:
                self.idle.emit()
