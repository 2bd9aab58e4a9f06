"""Map output with Qt: rasterise the core's SVG figure to PNG, and export a live view.

`svg_to_png` is what `embedding-explorer project --out map.png` uses: QtGui + QtSvg only (no
widgets), on the offscreen platform when there is no display.
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.map import figure
from explorer.core.map.pipeline import MapData

SCALES = (1, 2, 4)


def ensure_gui_app():
    """A QGuiApplication for painting text (fonts need one); offscreen when headless."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        # a CLI figure with CJK or emoji labels would otherwise print font-database warnings
        os.environ.setdefault("QT_LOGGING_RULES", "qt.text.font.db=false;qt.qpa.*=false")
        app = QGuiApplication(["embedding-explorer"])
    return app


def svg_to_png(svg: str, path: str | Path, scale: float = 1.0) -> None:
    """Render SVG text to a PNG at `scale` × its own pixel size, on a white background."""
    from PySide6.QtCore import QByteArray, QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    ensure_gui_app()
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise ExplorerError("internal error: the map figure is not valid SVG")
    size = renderer.defaultSize()
    image = QImage(
        int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32
    )
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    renderer.render(painter, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    # the stubs want bytes for the format, but PySide6 6.11 raises ValueError unless it is str
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]
        raise ExplorerError(f"{path}: cannot write PNG")


def grab_png(widget, path: str | Path, scale: int = 1) -> None:
    """A widget (the map as shown, with its labels) as a PNG at 1×, 2× or 4× resolution."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QImage, QPainter

    if scale not in SCALES:
        raise ExplorerError(f"scale must be one of {SCALES}, not {scale}")
    size = widget.size()
    image = QImage(size.width() * scale, size.height() * scale, QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    widget.render(painter, QPoint(0, 0))
    painter.end()
    # the stubs want bytes for the format, but PySide6 6.11 raises ValueError unless it is str
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]
        raise ExplorerError(f"{path}: cannot write PNG")


def map_figure_svg(data: MapData, subtitle: str = "", width: int = 1920, height: int = 1080) -> str:
    """The map as the CLI draws it (`figure.map_svg`): one vector `<circle>` per point."""
    nb = data.nb
    position = {int(i): k for k, i in enumerate(nb.ids)}
    highlight = [position[i] for i in nb.query_ids if i in position]
    query = f"“{nb.labels[highlight[0]]}”" if len(highlight) == 1 else "the nearest query token"
    return figure.map_svg(
        data.coords,
        nb.labels,
        title=nb.title[:1].upper() + nb.title[1:],
        subtitle=subtitle,
        similarity=nb.similarity,
        highlight=highlight,
        colour_label=f"cosine to {query}",
        width=width,
        height=height,
    )


def write_map(view, data: MapData, path: Path, scale: int = 1) -> None:
    """The map by file type: .png (the view as shown, at `scale`), .svg (vector shapes, the
    same figure as `embedding-explorer project --out map.svg`), coordinates .csv / .json."""
    kind = path.suffix.lower()
    nb = data.nb
    if kind == ".png":
        grab_png(view, path, scale)
    elif kind == ".svg":
        path.write_text(map_figure_svg(data), encoding="utf-8")
    elif kind == ".csv":
        path.write_text(figure.coordinates_csv(nb.ids, nb.labels, data.coords), encoding="utf-8")
    elif kind == ".json":
        text = figure.coordinates_json(
            nb.ids, nb.labels, data.coords, title=nb.title, final=data.final
        )
        path.write_text(text, encoding="utf-8")
    else:
        raise ExplorerError(f"{path.name}: export as .png, .svg, .csv or .json")
