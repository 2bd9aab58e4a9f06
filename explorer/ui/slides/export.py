"""Slides as pictures: each shown in turn and grabbed, then saved as PNGs or one PDF."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QThread
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from explorer.core.errors import ExplorerError
from explorer.render import pdf, raster

SETTLE_MS = 15000  # at most this long for a slide's jobs (rows, neighbours) to finish


def settle(busy: Callable[[], bool], timeout_ms: int = SETTLE_MS) -> None:
    """Process events until `busy()` is false three passes in a row (results start jobs)."""
    clock = QElapsedTimer()
    clock.start()
    quiet = 0
    while quiet < 3 and clock.elapsed() < timeout_ms:
        QApplication.processEvents()
        if busy():
            quiet = 0
            QThread.msleep(5)
        else:
            quiet += 1


def render(
    slides: list[dict],
    show: Callable[[dict], None],
    busy: Callable[[], bool],
    widget: Callable[[], QWidget],
) -> list[QImage]:
    """Each slide shown with `show`, waited for, and the view `widget()` then shows grabbed."""
    images = []
    for slide in slides:
        show(slide)
        settle(busy)
        images.append(widget().grab().toImage())
    return images


def write_pngs(images: list[QImage], folder: str | Path) -> list[Path]:
    """`slide-01.png`, `slide-02.png`, … in `folder`."""
    return raster.write_pngs(images, folder, "slide")


def write_pdf(images: list[QImage], path: str | Path) -> None:
    """One page per slide, each page the slide's own shape."""
    if not images:
        raise ExplorerError("there are no slides to export (Ctrl+B saves one)")
    pdf.write_pdf(images, path, "Slides")
