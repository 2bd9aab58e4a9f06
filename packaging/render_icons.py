"""Render the app icon's PNG sizes from its SVG with QtSvg (run offscreen, needs PySide6).

    python packaging/render_icons.py ICON.svg OUT_HICOLOR_DIR 64 128 256

writes OUT_HICOLOR_DIR/<N>x<N>/apps/<icon name>.png for each size N.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def render(svg: Path, hicolor: Path, sizes: list[int]) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    written = []
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = hicolor / f"{size}x{size}" / "apps" / f"{svg.stem}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(out)):
            raise SystemExit(f"{out}: cannot write the PNG")
        written.append(out)
    return written


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    for path in render(Path(sys.argv[1]), Path(sys.argv[2]), [int(n) for n in sys.argv[3:]]):
        print(path)
