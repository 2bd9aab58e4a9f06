"""The context a running job gets as ``ctx`` (see explorer/app/jobs.py), and error messages."""

from __future__ import annotations

import inspect
import sys
import threading
import traceback
from collections.abc import Callable

from explorer.core.errors import Cancelled, ExplorerError


def error_message(exc: BaseException) -> str:
    """One line for the user: an ExplorerError's message, else the type and first line."""
    if isinstance(exc, ExplorerError):
        return str(exc)
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class JobContext:
    """What a running job may ask of its lane (passed as ``ctx``)."""

    def __init__(self, report: Callable[[str, float], None]):
        self._report = report  # (text, fraction), throttled by the job
        self._event = threading.Event()
        self._on_cancel: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early on cancel; True if cancelled."""
        return self._event.wait(seconds)

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def progress(self, fraction: float, text: str = "") -> None:
        self._report(text, fraction)

    def call_on_cancel(self, fn: Callable[[], None]) -> None:
        """Run `fn` when the job is cancelled (at once if it already is)."""
        with self._lock:
            if not self._event.is_set():
                self._on_cancel.append(fn)
                return
        fn()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            callbacks, self._on_cancel = self._on_cancel, []
        for fn in callbacks:
            try:
                fn()
            except Exception:  # a failed kill must not stop the other callbacks
                traceback.print_exc(file=sys.stderr)


def wants_context(work: Callable) -> bool:
    try:
        return "ctx" in inspect.signature(work).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
