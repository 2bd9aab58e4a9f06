"""Images as the pages of one PDF (QtGui's PDF writer)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QMarginsF, QSizeF
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter

from explorer.core.errors import ExplorerError


def write_pdf(images: Sequence[QImage], path: str | Path, title: str) -> None:
    """One page per image, each page the image's own shape (96 px to the inch)."""
    if not images:
        raise ExplorerError(f"{path}: there are no pages to write")
    writer = QPdfWriter(str(path))
    writer.setTitle(title)
    writer.setCreator("Embedding Explorer")
    writer.setResolution(96)
    painter: QPainter | None = None
    for n, image in enumerate(images):
        size = QPageSize(QSizeF(image.width() * 0.75, image.height() * 0.75), QPageSize.Unit.Point)
        writer.setPageLayout(
            QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0))
        )
        if painter is None:
            painter = QPainter(writer)
            if not painter.isActive():
                raise ExplorerError(f"{path}: cannot write PDF")
        elif not writer.newPage():
            raise ExplorerError(f"{path}: cannot add page {n + 1}")
        painter.drawImage(painter.viewport(), image)
    assert painter is not None
    painter.end()
