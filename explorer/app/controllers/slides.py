"""Slides: saved views of the window, stepped through in presentation mode.

A slide is the dict `Host.capture_view(slide=True)` makes plus a title (the session format's
"slides" entries); the deck only keeps them in order and knows which one is shown.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class SlideDeck(QObject):
    changed = Signal()  # slides added, removed or replaced
    current = Signal(int, object)  # index and slide to show

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.slides: list[dict] = []
        self.index = -1

    def __len__(self) -> int:
        return len(self.slides)

    def add(self, view: dict, title: str = "") -> int:
        """Append a slide after the current one; returns its number (from 1)."""
        slide = dict(view)
        slide["title"] = title or f"Slide {len(self.slides) + 1}"
        self.index = len(self.slides)
        self.slides.append(slide)
        self.changed.emit()
        return self.index + 1

    def replace(self, slides: list[dict]) -> None:
        self.slides = [dict(s) for s in slides]
        self.index = -1
        self.changed.emit()

    def clear(self) -> None:
        self.replace([])

    def step(self, delta: int) -> dict | None:
        """Move to the next (+1) or previous (-1) slide and announce it; None when empty."""
        if not self.slides:
            return None
        self.index = max(0, min(len(self.slides) - 1, self.index + delta))
        slide = self.slides[self.index]
        self.current.emit(self.index, slide)
        return slide
