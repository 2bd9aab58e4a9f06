"""The `progress=` argument of the API's long calls, as a core `JobContext`.

- None or False: no progress;
- a callable: called as `progress(fraction, text)` with fraction in 0..1 (negative: unknown);
- True: a progress bar on stderr, tqdm's (terminal or notebook) when tqdm is installed, else a
  one-line text bar;
- a `JobContext`: used as given, so another thread can `cancel()` the call (it then raises
  `explorer.Cancelled`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from explorer.core.context import NULL_CONTEXT, JobContext

ProgressArg = bool | Callable[[float, str], Any] | JobContext | None

BAR_WIDTH = 30


class TextBar:
    """A one-line text bar, redrawn in place: `what [#######         ]  45 %  text`."""

    def __init__(self, what: str, stream: TextIO | None = None):
        self.what, self.stream = what, stream or sys.stderr
        self._shown = -1

    def update(self, fraction: float, text: str = "") -> None:
        percent = int(100 * min(max(fraction, 0.0), 1.0))
        if percent == self._shown or fraction < 0:
            return
        self._shown = percent
        filled = BAR_WIDTH * percent // 100
        bar = "#" * filled + " " * (BAR_WIDTH - filled)
        self.stream.write(f"\r{self.what} [{bar}] {percent:3d} %  {text[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self._shown >= 0:
            self.stream.write("\n")
            self.stream.flush()


class TqdmBar:
    """tqdm's bar (tqdm.auto: a widget in a notebook) driven by fractions."""

    def __init__(self, what: str):
        from tqdm.auto import tqdm

        self._bar = tqdm(total=1000, desc=what, leave=False)
        self._done = 0

    def update(self, fraction: float, text: str = "") -> None:
        if fraction < 0:
            return
        now = int(1000 * min(fraction, 1.0))
        if now > self._done:
            self._bar.update(now - self._done)
            self._done = now
        if text:
            self._bar.set_postfix_str(text[:40], refresh=False)

    def close(self) -> None:
        self._bar.close()


def _bar(what: str) -> TextBar | TqdmBar:
    try:
        return TqdmBar(what)
    except ImportError:
        return TextBar(what)


@contextmanager
def job_context(progress: ProgressArg, what: str) -> Iterator[JobContext]:
    """The context a core call takes for the API's `progress=` argument."""
    if progress is None or progress is False:
        yield NULL_CONTEXT
    elif isinstance(progress, JobContext):
        yield progress
    elif progress is True:
        bar = _bar(what)
        try:
            yield JobContext(progress=bar.update)
        finally:
            bar.close()
    elif callable(progress):
        yield JobContext(progress=progress)
    else:
        raise TypeError(
            f"progress must be True, False, None, a callable or a JobContext, not {progress!r}"
        )
