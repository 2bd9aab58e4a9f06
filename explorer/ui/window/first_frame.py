"""Run work once a window has drawn its first frame: what a start can leave for later (imports
that take seconds on a fresh install) must not keep the window off the screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QWidget


class _OnFirstExpose(QObject):
    def __init__(self, window: QWindow, work: Callable[[], Any]):
        super().__init__(window)
        self._work = work
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt naming
        if event.type() == QEvent.Type.Expose and isinstance(watched, QWindow):
            if watched.isExposed():
                watched.removeEventFilter(self)
                # queued: it runs once the expose's paint has been drawn and flushed
                QTimer.singleShot(0, self._work)
                self.deleteLater()
        return False


def after_first_frame(widget: QWidget, work: Callable[[], Any]) -> None:
    """Run `work` on the GUI thread once `widget`'s window is on screen (call it from the first
    showEvent); at once (queued) if it is already exposed."""
    handle = widget.windowHandle()
    if handle is None or handle.isExposed():
        QTimer.singleShot(0, work)
    else:
        _OnFirstExpose(handle, work)
