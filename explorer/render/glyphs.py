"""Which text a font can draw on this machine: a character no installed font covers shows as an
empty box. Qt answers per character, counting the fonts it falls back on (a CJK font for 中);
asking about a character no font has takes tens of microseconds, so each answer is kept. The
map's labels (window and figures) name their tiles by tokens the font draws."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PySide6.QtGui import QFont, QFontMetrics

from explorer.render.raster import gui_app


class Coverage:
    """The characters `font` (with Qt's fallback fonts) can draw, asked once each."""

    def __init__(self, font: QFont):
        self._metrics = QFontMetrics(font)
        self._chars: dict[str, bool] = {}

    def draws_char(self, ch: str) -> bool:
        known = self._chars.get(ch)
        if known is None:
            known = self._chars[ch] = ch.isspace() or self._metrics.inFontUcs4(ord(ch))
        return known

    def draws(self, text: str) -> bool:
        """Every character of `text` has a glyph (no box would show)."""
        return all(map(self.draws_char, text))

    def drawable(self, text: str) -> str:
        """`text` with each character the font cannot draw written as U+XXXX."""
        return "".join(ch if self.draws_char(ch) else f"U+{ord(ch):04X}" for ch in text)

    def usable(self, labels: Sequence[str]) -> Callable[[np.ndarray], np.ndarray]:
        """A function from point indices to a bool mask: which of these `labels` it draws
        (what explorer.core.map.tiles.Tiles.labels_in takes)."""

        def usable(points: np.ndarray) -> np.ndarray:
            return np.fromiter(
                (self.draws(labels[int(k)]) for k in points), dtype=bool, count=len(points)
            )

        return usable


def drawable(text: str, font: QFont) -> str:
    """`text` with every character the font cannot draw written as U+XXXX (no tofu boxes)."""
    return Coverage(font).drawable(text)


def default_coverage() -> Coverage:
    """What the default font draws (a Qt application made first if there is none: the CLI)."""
    gui_app()
    return Coverage(QFont())
