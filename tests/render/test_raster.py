"""PNG and PDF files drawn with QtGui alone: SVG figures at their size (or a multiple), frames
joined side by side, images as PDF pages. Each test takes the session's QApplication (`qapp`): a
QGuiApplication made here would stand in the way of the widget tests that follow."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor, QImage

from explorer.core import svg
from explorer.core.errors import ExplorerError
from explorer.render import pdf, raster

RED_SQUARE = svg.document(
    320, 240, ['<rect x="100" y="100" width="40" height="40" fill="#d62728"/>']
)


def test_svg_to_png_draws_the_figure_on_white_at_its_size_or_twice_it(qapp, tmp_path):
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    raster.svg_to_png(RED_SQUARE, one)
    raster.svg_to_png(RED_SQUARE, two, scale=2)
    a, b = QImage(str(one)), QImage(str(two))
    assert (a.width(), a.height()) == (320, 240) and (b.width(), b.height()) == (640, 480)
    assert a.pixelColor(5, 5) == QColor("white")
    assert a.pixelColor(120, 120) == QColor("#d62728") == b.pixelColor(240, 240)


def test_png_frames_join_side_by_side_and_images_become_pdf_pages(qapp, tmp_path):
    frames = []
    for n, colour in enumerate(("red", "blue")):
        image = raster.blank(30, 20 + 10 * n)
        image.fill(QColor(colour))
        frames += raster.write_pngs([image], tmp_path, f"f{n}")
    assert [p.name for p in frames] == ["f0-01.png", "f1-01.png"]
    raster.join_pngs(frames, tmp_path / "strip.png")
    strip = QImage(str(tmp_path / "strip.png"))
    assert (strip.width(), strip.height()) == (60, 30)
    assert strip.pixelColor(5, 5) == QColor("red") and strip.pixelColor(35, 25) == QColor("blue")
    assert strip.pixelColor(5, 25) == QColor("white")  # below the shorter frame

    pdf.write_pdf([QImage(str(p)) for p in frames], tmp_path / "two.pdf", "Two")
    data = (tmp_path / "two.pdf").read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", data)) == 2


def test_an_unwritable_png_is_one_clear_error(qapp, tmp_path):
    with pytest.raises(ExplorerError, match="cannot write PNG"):
        raster.svg_to_png(RED_SQUARE, tmp_path / "missing" / "x.png")
