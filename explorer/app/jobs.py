"""Background work in job lanes: one lane per kind of work, the latest request wins.

A controller declares the lanes it owns, with their priority, and uses them (on the GUI thread)::

    PROJECTION = LaneSpec("projection")                     # at module level, next to its owner
    SCAN = LaneSpec("stats", nice=SCAN_NICE)                # a scan of the vocabulary: niced

    lane = state.jobs.lane(PROJECTION)
    lane.submit(work, arg1, arg2, label="UMAP of 500 tokens",
                on_result=self._show,    # the GUI thread, with work's return value
                on_partial=self._peek,   # the GUI thread, with each ctx.partial(value)
                on_progress=None,        # the GUI thread, (text, fraction)
                on_error=None)           # the exception; default: the lane's `failed` signal

* ``work`` runs on the lane's own worker thread. If it has a parameter named ``ctx`` it gets
  the job's `explorer.core.context.JobContext`, which core functions take as it is:
  ``ctx.check()`` / ``ctx.cancelled()``, ``ctx.progress(fraction, text)``,
  ``ctx.partial(value)``, ``ctx.wait(seconds)``, ``ctx.call_on_cancel(fn)`` (kill a child).
* Build immutable inputs on the GUI thread (ids, text, the model object) and pass them as
  arguments; never touch a widget from ``work``.
* Each ``submit`` cancels the lane's previous job and bumps ``lane.generation``; results,
  partial results, progress and errors of older generations are dropped on arrival, so the
  handlers only ever see the latest request. Progress is coalesced (the latest value wins);
  every partial result of the current job is delivered, in order.
* ``lane.pause()`` / ``resume()`` / ``step()`` hold the current job at its next ``ctx.check()``
  (``step``: run on to its next partial result, then hold again); cancel wakes it.
* Errors reach ``on_error`` (or ``failed``) as the exception object: ``ExplorerError`` is bad
  input, anything else a bug (its traceback also goes to stderr); :func:`error_message` makes
  one line of either. ``Cancelled`` is silent. Nothing a job raises crashes the window.
* ``Jobs`` (``state.jobs``) owns every lane: ``busy``/``idle`` (all lanes done, results
  delivered), ``activity`` (text, fraction) for the status bar, ``cancel_all()`` and
  ``shutdown()`` (cancel and wait; the window calls it on close). Background lanes (the UMAP
  warm-up) are waited on at shutdown but count neither as busy nor as activity.
* A view that shows a lane's progress itself (a bar and Cancel in its pane) says so with
  ``jobs.set_shown(lane, viewer, on_screen)`` while that bar is on screen: ``activity`` leaves
  the lane out meanwhile, so the user sees each job's progress once (in the status bar when
  its pane is not on screen).
* ``Jobs(sync=True)`` runs every job inline inside ``submit`` (tests of controllers).
* A worker thread shares the GIL with the window: a C call that holds it for long (LAPACK in
  ``numpy.linalg.qr``, ``tokenizers.Tokenizer.encode``) freezes the window however it is
  scheduled. Run such work in a child process (explorer/app/child.py).
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, QRunnable, QThreadPool, Signal, Slot

from explorer.app import tuning
from explorer.core.context import JobContext
from explorer.core.errors import Cancelled, ExplorerError

__all__ = [
    "SCAN_NICE",
    "JobContext",
    "JobLane",
    "Jobs",
    "LaneSpec",
    "error_message",
    "running_workers",
]

SCAN_NICE = 5  # between the window (0) and the background children (tuning.BACKGROUND_NICE)


@dataclass(frozen=True)
class LaneSpec:
    """A lane as its owner declares it.

    ``nice``: the worker runs at this niceness at least, so that the window's thread, waking for
    a click, takes the core from it at once instead of sharing it turn by turn: ``SCAN_NICE``
    for scans of the whole vocabulary (seconds of CPU in kernels that release the GIL),
    ``tuning.BACKGROUND_NICE`` for work that keeps a core busy for a minute. ``background``:
    neither busy nor shown in the status bar (waited on at shutdown all the same)."""

    name: str
    nice: int | None = None
    background: bool = False


_running_lock = threading.Lock()
_running = 0  # workers inside run(), over every lane (tests assert it is 0 after each test)
_PROGRESS_INTERVAL = 0.05  # seconds between progress signals of one job

OnResult = Callable[[Any], None]
OnError = Callable[[BaseException], None]
OnProgress = Callable[[str, float], None]


@dataclass(frozen=True)
class _Handlers:
    result: OnResult | None = None
    error: OnError | None = None
    progress: OnProgress | None = None
    partial: OnResult | None = None


def error_message(exc: BaseException) -> str:
    """One line for the user: an ExplorerError's message, else the type and first line."""
    if isinstance(exc, ExplorerError):
        return str(exc)
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def running_workers() -> int:
    """Number of job functions executing right now in any lane (cancelled ones included)."""
    with _running_lock:
        return _running


def _wants_context(work: Callable) -> bool:
    try:
        return "ctx" in inspect.signature(work).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False


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
        self.ctx = JobContext(progress=self.progress, partial=self.partial)
        if _wants_context(work):
            self.kwargs = {**kwargs, "ctx": self.ctx}
        self._last_progress = 0.0
        # One progress signal in flight at a time, carrying the latest value when it arrives:
        # a GUI thread starved for a while then redraws once, not once per queued update.
        self.latest_progress = ("", 0.0)
        self.progress_queued = False

    def progress(self, fraction: float, text: str) -> None:
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_INTERVAL or fraction >= 1.0:
            self._last_progress = now
            self.latest_progress = (text, float(fraction))
            if not self.progress_queued:
                self.progress_queued = True
                self.lane._progress_out.emit(self.generation, text, float(fraction))

    def partial(self, value: Any) -> None:
        if not self.ctx.cancelled():
            self.lane._partial_out.emit(self.generation, value)

    def run(self) -> None:  # worker thread (or the caller's, with Jobs(sync=True))
        global _running
        with _running_lock:
            _running += 1
        outcome: str = "cancelled"
        payload: object = None
        try:
            tuning.tune_worker_thread()  # in the try: whatever happens, the lane hears the end
            nice = self.lane.spec.nice
            if nice is not None and not self.lane.sync:  # (sync: the caller's thread, as it is)
                tuning.lower_thread_priority(nice)
            if not self.ctx.cancelled():
                payload = self.work(*self.args, **self.kwargs)
                outcome = "cancelled" if self.ctx.cancelled() else "result"
        except Cancelled:
            outcome = "cancelled"
        except Exception as e:  # a job must never take the window down
            if self.ctx.cancelled():
                outcome = "cancelled"
            else:
                outcome, payload = "error", e
                if not isinstance(e, ExplorerError):
                    traceback.print_exc(file=sys.stderr)
                e.__traceback__ = None  # do not keep the job's frames (and inputs) alive
        finally:
            # Drop references to big inputs before the GUI thread hears about it.
            self.work, self.args, self.kwargs = None, (), {}  # type: ignore[assignment]
            with _running_lock:
                _running -= 1  # before the GUI thread can hear about it: nothing is left to do
            self.lane._done_out.emit(self.generation, outcome, payload)


class JobLane(QObject):
    """One kind of work. Lives on the GUI thread; its jobs run on its own single worker thread."""

    started = Signal(str)  # label of the job that became current
    progress = Signal(str, float)  # text, fraction 0..1 (negative: unknown)
    failed = Signal(object)  # the exception no on_error handled
    finished = Signal()  # the latest job ended (result, error or cancel)
    busyChanged = Signal(bool)

    # Private: emitted from the worker thread, delivered queued on the GUI thread.
    _progress_out = Signal(int, str, float)
    _partial_out = Signal(int, object)
    _done_out = Signal(int, str, object)

    def __init__(self, spec: LaneSpec, parent: QObject | None = None, sync: bool = False):
        super().__init__(parent)
        self.spec = spec
        self.name = spec.name
        self.sync = sync
        self.generation = 0
        self.label = ""
        self.fraction = -1.0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._jobs: dict[int, _Job] = {}  # submitted and not yet reported back
        self._handlers: dict[int, _Handlers] = {}
        self._current: int | None = None  # generation whose result is still awaited
        self._closed = False
        self._progress_out.connect(self._on_progress)
        self._partial_out.connect(self._on_partial)
        self._done_out.connect(self._on_done)

    # -- public ----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while the latest request has not been answered or any job is still running."""
        return bool(self._jobs)

    @property
    def waiting(self) -> bool:
        """The latest request has not been answered yet."""
        return self._current is not None

    def submit(
        self,
        work: Callable,
        *args: Any,
        label: str = "",
        on_result: OnResult | None = None,
        on_error: OnError | None = None,
        on_progress: OnProgress | None = None,
        on_partial: OnResult | None = None,
        **kwargs: Any,
    ) -> int:
        """Cancel the previous job and start `work(*args, **kwargs)`; returns its generation."""
        if inspect.isgeneratorfunction(work):  # the protocol is ctx; its result would be lost
            raise TypeError(f"{work.__name__} is a generator: report progress through ctx")
        if self._closed:
            return self.generation
        was_busy = self.busy
        self._cancel_jobs()
        self.generation += 1
        gen = self.generation
        job = _Job(self, gen, work, args, kwargs)
        self._jobs[gen] = job
        self._handlers[gen] = _Handlers(on_result, on_error, on_progress, on_partial)
        self._current = gen
        self.label = label or self.name
        self.fraction = -1.0
        self.started.emit(self.label)
        if not was_busy:
            self.busyChanged.emit(True)
        if self.sync:
            job.run()  # its signals are emitted on this thread: delivered before we return
        else:
            self._pool.start(job)
        return gen

    def cancel(self) -> None:
        """Cancel the current job; its result will be dropped."""
        if self._current is None:
            return
        self._current = None
        self._cancel_jobs()
        self.finished.emit()

    def pause(self) -> None:
        """Hold the current job at its next ``ctx.check()``."""
        if (job := self._current_job()) is not None:
            job.ctx.pause()

    def resume(self) -> None:
        if (job := self._current_job()) is not None:
            job.ctx.resume()

    def step(self) -> None:
        """While paused: let the current job run to its next partial result."""
        if (job := self._current_job()) is not None:
            job.ctx.step()

    def wait(self, msecs: int = -1) -> bool:
        """Block until no job of this lane runs (results are delivered later by the event loop)."""
        return self._pool.waitForDone(msecs)

    def shutdown(self, msecs: int = 5000) -> bool:
        self._closed = True
        self._current = None
        self._cancel_jobs()
        return self.wait(msecs)

    # -- internals ---------------------------------------------------------------------------
    def _current_job(self) -> _Job | None:
        return self._jobs.get(self._current) if self._current is not None else None

    def _cancel_jobs(self) -> None:
        for gen, job in list(self._jobs.items()):
            job.ctx.cancel()
            if not self.sync and self._pool.tryTake(job):  # never started: forget it now
                del self._jobs[gen]
                self._handlers.pop(gen, None)

    @Slot(int, str, float)
    def _on_progress(self, gen: int, text: str, fraction: float) -> None:
        if gen != self._current:
            return
        job = self._jobs.get(gen)
        if job is not None:
            job.progress_queued = False  # before reading: a newer value then sends a new signal
            text, fraction = job.latest_progress
        self.fraction = fraction
        on_progress = self._handlers.get(gen, _Handlers()).progress
        if on_progress is not None:
            on_progress(text, fraction)
        self.progress.emit(text, fraction)

    @Slot(int, object)
    def _on_partial(self, gen: int, value: object) -> None:
        on_partial = self._handlers.get(gen, _Handlers()).partial
        if gen != self._current or on_partial is None:
            return
        try:
            on_partial(value)
        except Exception as e:  # as for on_result: a bug, but not the window's end
            traceback.print_exc(file=sys.stderr)
            self.failed.emit(e)

    @Slot(int, str, object)
    def _on_done(self, gen: int, outcome: str, payload: object) -> None:
        self._jobs.pop(gen, None)
        handlers = self._handlers.pop(gen, _Handlers())
        if gen == self._current:
            self._current = None
            try:
                if outcome == "result" and handlers.result is not None:
                    handlers.result(payload)
                elif outcome == "error":
                    assert isinstance(payload, BaseException)
                    if handlers.error is not None:
                        handlers.error(payload)
                    else:
                        self.failed.emit(payload)
            except Exception as e:  # a broken handler is a bug, but must not kill the window
                traceback.print_exc(file=sys.stderr)
                self.failed.emit(e)
            self.finished.emit()
        if not self._jobs:
            self.busyChanged.emit(False)


class Jobs(QObject):
    """Every lane of the application, made on first use, plus the aggregate state the status
    bar shows."""

    idle = Signal()  # every lane has answered its latest request and no worker runs
    busyChanged = Signal(bool)
    activity = Signal(str, float)  # label of the newest running job, fraction (<0: unknown)
    failed = Signal(str, object)  # lane name, exception

    def __init__(self, parent: QObject | None = None, sync: bool = False):
        super().__init__(parent)
        self.sync = sync
        self._lanes: dict[str, JobLane] = {}
        self._order: list[str] = []  # most recently started lane last
        self._busy = False
        self._shown: dict[str, set[int]] = {}  # lane: the views showing its progress now

    def lane(self, spec: LaneSpec | str) -> JobLane:
        """The lane `spec` declares (a bare name: a plain lane), made the first time."""
        spec = spec if isinstance(spec, LaneSpec) else LaneSpec(spec)
        lane = self._lanes.get(spec.name)
        if lane is None:
            lane = self._add(spec)
        elif lane.spec != spec:
            raise ValueError(f"lane {spec.name!r} is declared twice: {lane.spec} and {spec}")
        return lane

    def _add(self, spec: LaneSpec) -> JobLane:
        lane = JobLane(spec, self, sync=self.sync)
        # All lane signals are emitted on the GUI thread, so plain callables are safe here.
        lane.started.connect(lambda *_, ln=lane: self._on_started(ln))
        lane.progress.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.finished.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.busyChanged.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.failed.connect(lambda exc, ln=lane: self.failed.emit(ln.name, exc))
        self._lanes[spec.name] = lane
        return lane

    @property
    def lanes(self) -> dict[str, JobLane]:
        return dict(self._lanes)

    def _foreground(self) -> list[JobLane]:
        return [ln for ln in self._lanes.values() if not ln.spec.background]

    @property
    def busy(self) -> bool:
        return self.busy_besides()

    def busy_besides(self, *lanes: LaneSpec | str) -> bool:
        """Busy, leaving out these lanes (as well as the background ones)."""
        names = {ln.name if isinstance(ln, LaneSpec) else ln for ln in lanes}
        return any(lane.busy for lane in self._foreground() if lane.name not in names)

    def current(self) -> tuple[str, float] | None:
        """(label, fraction) of the most recently started lane that is still working, leaving
        out those whose progress a view shows on screen (see set_shown)."""
        for lane in sorted(self._foreground(), key=self._recency, reverse=True):
            if lane.waiting and not self._shown.get(lane.name):
                return lane.label, lane.fraction
        return None

    def set_shown(self, lane: LaneSpec | str, viewer: int, on_screen: bool) -> None:
        """The view with key `viewer` shows the lane's progress (and a way to cancel it) on
        screen, or no longer does: the status bar's activity leaves the lane out while any view
        shows it."""
        name = lane.name if isinstance(lane, LaneSpec) else lane
        viewers = self._shown.setdefault(name, set())
        before = bool(viewers)
        (viewers.add if on_screen else viewers.discard)(viewer)
        if bool(viewers) != before and name in self._lanes:
            self._on_change(self._lanes[name])

    def cancel_all(self) -> None:
        for lane in self._foreground():
            lane.cancel()

    def shutdown(self, msecs: int = 5000) -> bool:
        """Cancel every lane (background ones too), then wait for the workers; call on close.

        All lanes are cancelled before any is waited on, and the lanes share one deadline of
        ``msecs``: an uninterruptible job (model load, UMAP warm-up) costs it once, not per lane.
        """
        for lane in self._lanes.values():
            lane.shutdown(0)
        clock = QElapsedTimer()
        clock.start()
        ok = True
        for lane in self._lanes.values():
            ok = lane.wait(max(0, msecs - clock.elapsed())) and ok
        return ok

    def _recency(self, lane: JobLane) -> int:
        return self._order.index(lane.name) if lane.name in self._order else -1

    def _on_started(self, lane: JobLane) -> None:
        if lane.name in self._order:
            self._order.remove(lane.name)
        self._order.append(lane.name)
        self._on_change(lane)

    def _on_change(self, lane: JobLane) -> None:
        if lane.spec.background:
            return
        cur = self.current()
        self.activity.emit(*(cur if cur else ("", -1.0)))
        busy = self.busy
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
            if not busy:
                self.idle.emit()
