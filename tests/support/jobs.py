"""A job context for tests: what a long core function reported, and a caller that gives up."""

from __future__ import annotations

from explorer.core.context import JobContext


class Recorder(JobContext):
    """A job context that records each progress fraction (and text) and, with `cancel_after`,
    cancels itself at that many reports: a caller that gives up part-way."""

    def __init__(self, cancel_after: int | None = None):
        super().__init__()
        self.fractions: list[float] = []
        self.texts: list[str] = []
        self.partials: list[object] = []
        self.cancel_after = cancel_after

    def progress(self, fraction: float, text: str = "") -> None:
        self.fractions.append(fraction)
        self.texts.append(text)
        if self.cancel_after is not None and len(self.fractions) >= self.cancel_after:
            self.cancel()

    def partial(self, value: object) -> None:
        self.partials.append(value)
