"""Background work in job lanes: one lane per kind of work, the latest request wins.

How a controller uses a lane (all calls on the GUI thread)::

    lane = state.jobs.lane(Lane.PROJECTION)     # every lane is a member of `Lane`
    lane.submit(work, arg1, arg2, label="UMAP of 500 tokens",
                on_result=self._show,    # called on the GUI thread with work's return value
                on_error=None)           # optional, gets the exception object; default: the
                                         # lane's `failed` signal (the status bar shows it)

* ``work`` runs on the lane's own worker thread. If it has a parameter named ``ctx`` it gets a
  :class:`JobContext`: ``ctx.cancelled()`` says whether to stop, ``ctx.progress(fraction,
  text)`` reports progress, ``ctx.call_on_cancel(fn)`` runs ``fn`` on the GUI thread when the job
  is cancelled (to kill a child process). ``JobContext`` satisfies explorer.core.context's
  protocol, so core functions take it directly.
* ``work`` may also be a generator function: it yields progress as a float 0..1 or a
  ``(text, fraction)`` pair and *returns* its result; the lane stops it at the next ``yield``
  once it is cancelled.
* Build immutable inputs on the GUI thread (ids, text, the model object) and pass them as
  arguments; never touch a widget from ``work``.
* Each ``submit`` cancels the lane's previous job and bumps ``lane.generation``; results,
  progress and errors of older generations are dropped on arrival, so ``on_result`` only ever
  sees the answer to the latest request.
* Errors reach ``on_error`` (or ``failed``) as the exception object: ``ExplorerError`` is bad
  input, anything else a bug (its traceback also goes to stderr); :func:`error_message` makes
  one line of either. ``Cancelled`` is silent. Nothing a job raises crashes the window.
* ``Jobs`` (``state.jobs``) owns every lane: ``busy``/``idle`` (all lanes done, results
  delivered), ``activity`` (text, fraction) for the status bar, ``cancel_all()`` and
  ``shutdown()`` (cancel and wait; the window calls it on close). Background lanes (the UMAP
  warm-up) are waited on at shutdown but count neither as busy nor as activity.
* ``Jobs(sync=True)`` runs every job inline inside ``submit`` (tests of controllers).
* A worker thread shares the GIL with the window: a C call that holds it for long (LAPACK in
  ``numpy.linalg.qr``, ``tokenizers.Tokenizer.encode``) freezes the window however it is
  scheduled. Run such work in a child process (explorer/app/index_process.py,
  explorer/app/tokenizer_service.py).
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, QRunnable, QThreadPool, Signal, Slot

from explorer.app import tuning
from explorer.app.job_context import JobContext, error_message, wants_context
from explorer.core.errors import Cancelled, ExplorerError

__all__ = ["JobContext", "JobLane", "Jobs", "Lane", "error_message", "running_workers"]


class Lane(StrEnum):
    """Every lane of the application. A new feature adds its member here."""

    MODEL = "model"
    LEVELS = "levels"
    TOKENIZE = "tokenize"
    LOOKUP = "lookup"  # rows of the selection for the viewer
    VOCAB = "vocab"
    FIND = "find"  # the token that text typed in the Find box names
    NEIGHBORS = "neighbors"
    INDEX = "index"  # the fast neighbour index (child process)
    PROJECTION = "projection"
    WARM_UP = "warm-up"  # compiling umap-learn once per process
    EXPLAIN = "explain"  # onehot(t) · E for the explain view
    STATS = "stats"  # the vocabulary statistics pass
    DIMENSION = "dimension"  # one dimension across the vocabulary
    HEAD = "head"  # cosine of E and the output head over the vocabulary
    HEAD_TOKEN = "head-token"  # one token's neighbours in E and U, direct path
    KINDS = "kinds"  # the kind of every token (colour by kind in the map)
    SESSION = "session"  # reading a session file and checking its model
    LEARN = "learn"  # training a table live (the Learn tab)
    CONTRAST = "contrast"  # real matrix vs its random twin, in numbers
    COMPARE = "compare"  # opening a second model and aligning its vocabulary with the first
    COMPARE_TOKEN = "compare-token"  # one token's neighbours and maps in both models
    COMPARE_OVERLAP = "compare-overlap"  # neighbour overlap over a sample of shared tokens


BACKGROUND_LANES = frozenset({Lane.WARM_UP})  # neither busy nor shown in the status bar
SCAN_NICE = 5  # between the window (0) and the background children (tuning.BACKGROUND_NICE)
# Lanes whose worker runs niced, so that the window's thread, waking for a click, takes the core
# from it at once instead of sharing it turn by turn: the scans of the whole vocabulary (seconds
# of CPU on a large model, in kernels that release the GIL), and training, which keeps a core
# busy for a minute.
LANE_NICE = {
    lane: SCAN_NICE
    for lane in (
        Lane.NEIGHBORS,
        Lane.STATS,
        Lane.DIMENSION,
        Lane.HEAD,
        Lane.CONTRAST,
        Lane.COMPARE_OVERLAP,
    )
} | {Lane.LEARN: tuning.BACKGROUND_NICE}

_running_lock = threading.Lock()
_running = 0  # workers inside run(), over every lane (tests assert it is 0 after each test)
_PROGRESS_INTERVAL = 0.05  # seconds between progress signals of one job

OnResult = Callable[[Any], None]
OnError = Callable[[BaseException], None]
OnProgress = Callable[[str, float], None]


def running_workers() -> int:
    """Number of job functions executing right now in any lane (cancelled ones included)."""
    with _running_lock:
        return _running


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
        self.ctx = JobContext(self.progress)
        if wants_context(work):
            self.kwargs = {**kwargs, "ctx": self.ctx}
        self._last_progress = 0.0
        # One progress signal in flight at a time, carrying the latest value when it arrives:
        # a GUI thread starved for a while then redraws once, not once per queued update.
        self.latest_progress = ("", 0.0)
        self.progress_queued = False

    def progress(self, text: str, fraction: float) -> None:
        now = time.monotonic()
        if now - self._last_progress >= _PROGRESS_INTERVAL or fraction >= 1.0:
            self._last_progress = now
            self.latest_progress = (text, float(fraction))
            if not self.progress_queued:
                self.progress_queued = True
                self.lane._progress_out.emit(self.generation, text, float(fraction))

    def _execute(self) -> Any:
        if inspect.isgeneratorfunction(self.work):
            gen = self.work(*self.args, **self.kwargs)
            try:
                while True:
                    if self.ctx.cancelled():
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

    def run(self) -> None:  # worker thread (or the caller's, with Jobs(sync=True))
        global _running
        with _running_lock:
            _running += 1
        outcome: str = "cancelled"
        payload: object = None
        try:
            tuning.tune_worker_thread()  # in the try: whatever happens, the lane hears the end
            nice = LANE_NICE.get(self.lane.name)
            if nice is not None and not self.lane.sync:  # (sync: the caller's thread, as it is)
                tuning.lower_thread_priority(nice)
            if not self.ctx.cancelled():
                payload = self._execute()
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
    _done_out = Signal(int, str, object)

    def __init__(self, name: Lane, parent: QObject | None = None, sync: bool = False):
        super().__init__(parent)
        self.name = name
        self.sync = sync
        self.generation = 0
        self.label = ""
        self.fraction = -1.0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._jobs: dict[int, _Job] = {}  # submitted and not yet reported back
        self._handlers: dict[int, tuple[OnResult | None, OnError | None, OnProgress | None]] = {}
        self._current: int | None = None  # generation whose result is still awaited
        self._closed = False
        self._progress_out.connect(self._on_progress)
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
                    assert isinstance(payload, BaseException)
                    if on_error is not None:
                        on_error(payload)
                    else:
                        self.failed.emit(payload)
            except Exception as e:  # a broken handler is a bug, but must not kill the window
                traceback.print_exc(file=sys.stderr)
                self.failed.emit(e)
            self.finished.emit()
        if not self._jobs:
            self.busyChanged.emit(False)


class Jobs(QObject):
    """Every lane of the application, plus the aggregate state the status bar shows."""

    idle = Signal()  # every lane has answered its latest request and no worker runs
    busyChanged = Signal(bool)
    activity = Signal(str, float)  # label of the newest running job, fraction (<0: unknown)
    failed = Signal(str, object)  # lane name, exception

    def __init__(self, parent: QObject | None = None, sync: bool = False):
        super().__init__(parent)
        self.sync = sync
        self._lanes: dict[Lane, JobLane] = {}
        self._order: list[Lane] = []  # most recently started lane last
        self._busy = False
        for name in Lane:
            self._add(name)

    def lane(self, name: Lane) -> JobLane:
        return self._lanes[Lane(name)]

    def _add(self, name: Lane) -> None:
        lane = JobLane(name, self, sync=self.sync)
        # All lane signals are emitted on the GUI thread, so plain callables are safe here.
        lane.started.connect(lambda *_, ln=lane: self._on_started(ln))
        lane.progress.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.finished.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.busyChanged.connect(lambda *_, ln=lane: self._on_change(ln))
        lane.failed.connect(lambda exc, ln=lane: self.failed.emit(str(ln.name), exc))
        self._lanes[name] = lane

    @property
    def lanes(self) -> dict[Lane, JobLane]:
        return dict(self._lanes)

    def _foreground(self) -> list[JobLane]:
        return [ln for name, ln in self._lanes.items() if name not in BACKGROUND_LANES]

    @property
    def busy(self) -> bool:
        return self.busy_besides()

    def busy_besides(self, *names: Lane) -> bool:
        """Busy, leaving out these lanes (as well as the background ones)."""
        return any(lane.busy for lane in self._foreground() if lane.name not in names)

    def current(self) -> tuple[str, float] | None:
        """(label, fraction) of the most recently started lane that is still working."""
        for lane in sorted(self._foreground(), key=self._recency, reverse=True):
            if lane.waiting:
                return lane.label, lane.fraction
        return None

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
        if lane.name in BACKGROUND_LANES:
            return
        cur = self.current()
        self.activity.emit(*(cur if cur else ("", -1.0)))
        busy = self.busy
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
            if not busy:
                self.idle.emit()
