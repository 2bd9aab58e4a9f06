"""PNG files from SVG text, from a painting function (a widget's, in ui), or from other images.

QtGui and QtSvg only: `embedding-explorer project --out map.png` uses this without a window, on
the offscreen platform when there is no display.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPaintDevice, QPainter
from PySide6.QtSvg import QSvgRenderer

from explorer.core.errors import ExplorerError


def gui_app() -> QGuiApplication:
    """The running Qt application, else a QGuiApplication for painting text (fonts need one),
    offscreen when there is no display."""
    app = QGuiApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        # a CLI figure with CJK or emoji labels would otherwise print font-database warnings
        os.environ.setdefault("QT_LOGGING_RULES", "qt.text.font.db=false;qt.qpa.*=false")
        app = QGuiApplication(["embedding-explorer"])
    assert isinstance(app, QGuiApplication)
    return app


def blank(width: int, height: int, scale: float = 1) -> QImage:
    """A white image of `width` × `height` at `scale` pixels to the unit."""
    image = QImage(int(width * scale), int(height * scale), QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    return image


@contextmanager
def painting(device: QPaintDevice) -> Iterator[QPainter]:
    """A painter on `device` with smooth shapes and text, ended on leaving."""
    painter = QPainter(device)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    try:
        yield painter
    finally:
        painter.end()


def save_png(image: QImage, path: str | Path) -> None:
    # the stubs want bytes for the format, but PySide6 6.11 raises ValueError unless it is str
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]
        raise ExplorerError(f"{path}: cannot write PNG")


def paint_png(
    width: int, height: int, paint: Callable[[QPainter], None], path: str | Path, scale: float = 1
) -> None:
    """What `paint` draws on a white `width` × `height` canvas, as a PNG at `scale` × that size."""
    image = blank(width, height, scale)
    with painting(image) as painter:
        paint(painter)
    save_png(image, path)


def svg_to_png(svg: str, path: str | Path, scale: float = 1.0) -> None:
    """SVG text as a PNG at `scale` × its own pixel size, on a white background."""
    gui_app()
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise ExplorerError("internal error: the figure is not valid SVG")
    size = renderer.defaultSize()
    paint_png(
        size.width(),
        size.height(),
        lambda painter: renderer.render(painter, QRectF(0, 0, size.width(), size.height())),
        path,
        scale,
    )


def join_pngs(frames: Sequence[Path], path: Path) -> None:
    """PNG files side by side in one PNG."""
    images = [QImage(str(p)) for p in frames]
    if not images or any(i.isNull() for i in images):
        raise ExplorerError(f"{path}: cannot read the frames to join")
    strip = blank(sum(i.width() for i in images), max(i.height() for i in images))
    with painting(strip) as painter:
        x = 0
        for image in images:
            painter.drawImage(x, 0, image)
            x += image.width()
    save_png(strip, path)


def write_pngs(images: Sequence[QImage], folder: str | Path, stem: str) -> list[Path]:
    """`stem-01.png`, `stem-02.png`, … in `folder`."""
    paths = []
    for n, image in enumerate(images, 1):
        path = Path(folder) / f"{stem}-{n:02d}.png"
        save_png(image, path)
        paths.append(path)
    return paths
