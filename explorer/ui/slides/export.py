"""Slides as pictures: each shown in turn and grabbed, then saved as PNGs or one PDF."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QMarginsF, QSizeF, QThread
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication, QWidget

from explorer.core.errors import ExplorerError

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


def write_pngs(images: list[QImage], folder: str | Path, stem: str = "slide") -> list[Path]:
    folder = Path(folder)
    paths = []
    for n, image in enumerate(images, 1):
        path = folder / f"{stem}-{n:02d}.png"
        if not image.save(str(path), "PNG"):  # type: ignore[call-overload]
            raise ExplorerError(f"{path}: cannot write PNG")
        paths.append(path)
    return paths


def write_pdf(images: list[QImage], path: str | Path, title: str = "Slides") -> None:
    """One page per slide, each page the slide's own shape (96 px to the inch)."""
    if not images:
        raise ExplorerError("there are no slides to export (Ctrl+B saves one)")
    writer = QPdfWriter(str(path))
    writer.setTitle(title)
    writer.setCreator("Embedding Explorer")
    writer.setResolution(96)
    painter: QPainter | None = None
    for n, image in enumerate(images):
        size = QPageSize(QSizeF(image.width() * 0.75, image.height() * 0.75), QPageSize.Unit.Point)
        layout = QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
        writer.setPageLayout(layout)
        if painter is None:
            painter = QPainter(writer)
            if not painter.isActive():
                raise ExplorerError(f"{path}: cannot write PDF")
        elif not writer.newPage():
            raise ExplorerError(f"{path}: cannot add page {n + 1}")
        target = painter.viewport()
        painter.drawImage(target, image)
    assert painter is not None
    painter.end()
