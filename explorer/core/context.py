"""What a long computation may ask of whoever runs it: the one job context, ``ctx``.

Every core function that takes a while takes ``ctx: JobContext`` (default ``NULL_CONTEXT``):

* ``ctx.check(what)`` between blocks: raises `Cancelled` once the caller has cancelled, and
  blocks while the caller has paused the job (``ctx.cancelled()`` only asks);
* ``ctx.progress(fraction, text)``: 0..1, negative for unknown;
* ``ctx.partial(value)``: a result on the way (a preview, a training epoch), delivered to the
  caller while the job goes on; the function still returns its final result;
* ``ctx.part(start, width, text)``: a context for a sub-step whose progress 0..1 lands in
  ``start .. start + width`` of this one, labelled `text` (if given) whatever the step says.

The app's job lanes make one per job (explorer/app/jobs.py) and wire its callbacks to signals on
the GUI thread; scripts, the CLI and tests pass ``NULL_CONTEXT`` or make their own
``JobContext(progress=..., partial=...)``. Nothing here knows about Qt.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from explorer.core.errors import Cancelled

ProgressFn = Callable[[float, str], None]  # fraction, text
PartialFn = Callable[[Any], None]


class JobContext:
    """Cancel, pause, progress and partial results of one job; thread-safe.

    The job calls ``check``, ``cancelled``, ``wait``, ``progress`` and ``partial``; whoever runs
    it calls ``cancel``, ``pause``, ``resume`` and ``step`` (from any thread)."""

    def __init__(self, progress: ProgressFn | None = None, partial: PartialFn | None = None):
        self._progress = progress
        self._partial = partial
        self._cond = threading.Condition()
        self._cancel = False
        self._paused = False
        self._pause_at_partial = False  # `step`: pause again once the next partial is out
        self._on_cancel: list[Callable[[], None]] = []

    # -- the job's side -----------------------------------------------------------------------
    def cancelled(self) -> bool:
        return self._cancel

    def check(self, what: str = "") -> None:
        """Raise Cancelled ("<what> cancelled") if cancelled; while paused, wait here."""
        if self._paused:
            with self._cond:
                self._cond.wait_for(lambda: self._cancel or not self._paused)
        if self._cancel:
            raise Cancelled(f"{what} cancelled" if what else "")

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early on cancel; True if cancelled."""
        with self._cond:
            return self._cond.wait_for(lambda: self._cancel, timeout=seconds)

    def progress(self, fraction: float, text: str = "") -> None:
        if self._progress is not None:
            self._progress(float(fraction), text)

    def partial(self, value: Any) -> None:
        """Hand `value` to the caller now; after a ``step``, the job pauses at its next check."""
        if self._partial is not None:
            self._partial(value)
        with self._cond:
            if self._pause_at_partial:
                self._pause_at_partial, self._paused = False, True

    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        """Run `fn` when the job is cancelled, on the cancelling thread (at once if it already
        is): to kill a child process whose output the job blocks on."""
        with self._cond:
            if not self._cancel:
                self._on_cancel.append(fn)
                return
        fn()

    def part(self, start: float = 0.0, width: float = 1.0, text: str = "") -> JobContext:
        return SubContext(self, start, width, text)

    # -- the caller's side --------------------------------------------------------------------
    def cancel(self) -> None:
        with self._cond:
            self._cancel = True
            callbacks, self._on_cancel = self._on_cancel, []
            self._cond.notify_all()
        for fn in callbacks:
            try:
                fn()
            except Exception:  # a failed kill must not stop the other callbacks
                traceback.print_exc(file=sys.stderr)

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        """The job stops at its next ``check`` until resumed (or cancelled)."""
        with self._cond:
            self._paused, self._pause_at_partial = True, False

    def resume(self) -> None:
        with self._cond:
            self._paused, self._pause_at_partial = False, False
            self._cond.notify_all()

    def step(self) -> None:
        """While paused: run on until the job's next partial result, then pause again."""
        with self._cond:
            if self._paused:
                self._paused, self._pause_at_partial = False, True
                self._cond.notify_all()


class SubContext(JobContext):
    """A sub-step of a job: its own progress range and label, everything else the parent's
    (subclasses change one more thing, e.g. what happens after a partial result)."""

    def __init__(self, parent: JobContext, start: float = 0.0, width: float = 1.0, text: str = ""):
        super().__init__()
        self._parent, self._start, self._width, self._text = parent, start, width, text

    def cancelled(self) -> bool:
        return self._parent.cancelled()

    def check(self, what: str = "") -> None:
        self._parent.check(what)

    def wait(self, seconds: float) -> bool:
        return self._parent.wait(seconds)

    def progress(self, fraction: float, text: str = "") -> None:
        f = float(fraction)
        self._parent.progress(self._start + self._width * f if f >= 0 else f, self._text or text)

    def partial(self, value: Any) -> None:
        self._parent.partial(value)

    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        self._parent.call_on_cancel(fn)

    def cancel(self) -> None:
        self._parent.cancel()

    @property
    def paused(self) -> bool:
        return self._parent.paused

    def pause(self) -> None:
        self._parent.pause()

    def resume(self) -> None:
        self._parent.resume()

    def step(self) -> None:
        self._parent.step()


class _NullContext(JobContext):
    """Never cancelled nor paused, reports nowhere: for scripts and tests."""

    def cancel(self) -> None:
        raise TypeError("NULL_CONTEXT cannot be cancelled; make a JobContext()")

    def pause(self) -> None:
        raise TypeError("NULL_CONTEXT cannot be paused; make a JobContext()")

    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        pass  # never cancelled: nothing to remember


NULL_CONTEXT: JobContext = _NullContext()
