"""The Slides menu: views saved as slides (SlideDeck), stepped through with the arrow keys while
presenting, exported as PNGs or one PDF; the deck is stored in sessions."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFileDialog

from explorer.app.controllers.slides import SlideDeck
from explorer.app.state import AppState
from explorer.core.errors import ExplorerError
from explorer.ui.host import Host
from explorer.ui.slides import export

ARROWS = (
    (Qt.Key.Key_Right, 1),
    (Qt.Key.Key_Down, 1),
    (Qt.Key.Key_PageDown, 1),
    (Qt.Key.Key_Left, -1),
    (Qt.Key.Key_Up, -1),
    (Qt.Key.Key_PageUp, -1),
)


class Slides(QObject):
    def __init__(self, host: Host):
        super().__init__(host)
        self.host = host
        self.deck = SlideDeck(self)
        add = host.add_action
        add("slides", "slides", "&Save view as slide", self.add_slide, "Ctrl+B")
        add("slides", "slides", "&Next slide", lambda: self.deck.step(1))
        add("slides", "slides", "&Previous slide", lambda: self.deck.step(-1))
        host.add_separator("slides", "slides")
        add("slides", "slides", "Export slides as P&NG…", self.export_png_dialog)
        add("slides", "slides", "Export slides as P&DF…", self.export_pdf_dialog)
        add("slides", "slides", "&Clear slides", self.deck.clear)
        self.arrows = []
        for key, delta in ARROWS:
            shortcut = QShortcut(QKeySequence(key), host.widget)
            shortcut.setEnabled(False)  # only while presenting: tables and text need arrows
            shortcut.activated.connect(lambda d=delta: self.deck.step(d))
            self.arrows.append(shortcut)
        host.presentingChanged.connect(self._presenting)
        self.deck.current.connect(self._show_slide)
        host.add_view_state(
            "slides", lambda: [dict(s) for s in self.deck.slides], self._replace, in_slides=False
        )

    def _replace(self, slides) -> None:
        self.deck.replace(list(slides or []))

    def add_slide(self) -> None:
        number = self.deck.add(self.host.capture_view(slide=True))
        self.host.say(f"Saved slide {number} of {len(self.deck)}")

    def _show_slide(self, index: int, slide: dict) -> None:
        self.host.apply_view(slide)
        self.host.say(f"Slide {index + 1} of {len(self.deck)}")

    def _presenting(self, on: bool) -> None:
        for shortcut in self.arrows:
            shortcut.setEnabled(on)

    def images(self) -> list:
        host = self.host
        before = host.capture_view(slide=True)
        images = export.render(
            self.deck.slides, host.apply_view, lambda: host.pending, host.current_tab
        )
        host.apply_view(before)
        return images

    def export_pdf(self, path: str | Path) -> None:
        export.write_pdf(self.images(), path)
        self.host.say(f"Saved {len(self.deck)} slides to {Path(path).name}")

    def export_png(self, folder: str | Path) -> list[Path]:
        paths = export.write_pngs(self.images(), folder)
        self.host.say(f"Saved {len(paths)} slide PNGs in {folder}")
        return paths

    def export_pdf_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.host.widget, "Export slides", "slides.pdf", "PDF (*.pdf)"
        )
        if path:
            self._try(lambda: self.export_pdf(path))

    def export_png_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.host.widget, "Export slides as PNGs into")
        if folder:
            self._try(lambda: self.export_png(folder))

    def _try(self, work) -> None:
        try:
            work()
        except (ExplorerError, OSError) as e:
            self.host.show_error(f"Export failed: {e}")


def install(host: Host, _state: AppState) -> Slides:
    return Slides(host)
