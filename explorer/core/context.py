"""What a long computation may ask of whoever runs it: "am I cancelled?" and "report progress".

Core functions that take a while accept a ``ctx: JobContext`` argument. The app's job lanes
pass their own context (explorer/app/jobs.py); scripts and tests pass ``NULL_CONTEXT`` or a
``CallbackContext``. Nothing here knows about threads or Qt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from explorer.core.errors import Cancelled


class JobContext(Protocol):
    def cancelled(self) -> bool:
        """True once the caller no longer wants the result; stop at the next safe point."""
        ...

    def progress(self, fraction: float, text: str = "") -> None:
        """Report progress: `fraction` 0..1 (negative: unknown) and an optional line of text."""
        ...


class CancellableContext(JobContext, Protocol):
    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        """Run `fn` (from any thread) when the job is cancelled; at once if it already is."""
        ...


class CallbackContext:
    """A context made of two optional callables (for scripts, tests and the CLI);
    ``cancel()`` cancels it by hand."""

    def __init__(
        self,
        cancelled: Callable[[], bool] | None = None,
        progress: Callable[[float, str], None] | None = None,
    ):
        self._cancelled = cancelled
        self._progress = progress
        self._cancel_set = False
        self._on_cancel: list[Callable[[], None]] = []

    def cancelled(self) -> bool:
        return self._cancel_set or (self._cancelled is not None and bool(self._cancelled()))

    def cancel(self) -> None:
        self._cancel_set = True
        callbacks, self._on_cancel = self._on_cancel, []
        for fn in callbacks:
            fn()

    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        if self.cancelled():
            fn()
        else:
            self._on_cancel.append(fn)

    def progress(self, fraction: float, text: str = "") -> None:
        if self._progress is not None:
            self._progress(fraction, text)


NULL_CONTEXT: CancellableContext = CallbackContext()


CancelCheck = Callable[[], bool] | None
"""The plain form some core functions take as ``cancelled=``: True means stop (None: never)."""


def check_cancelled(cancelled: CancelCheck, what: str = "") -> None:
    """Raise Cancelled ("<what> cancelled") if `cancelled` says so."""
    if cancelled is not None and cancelled():
        raise Cancelled(f"{what} cancelled" if what else "")


def raise_if_cancelled(ctx: JobContext) -> None:
    if ctx.cancelled():
        raise Cancelled()
