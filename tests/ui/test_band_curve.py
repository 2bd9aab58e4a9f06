"""A dense row drawn as column spans lights the same pixels as Qt's stroke of the same line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QImage

from explorer.core.model.formats.safetensors import write_safetensors
from explorer.core.model.open import open_model
from explorer.core.rows.read import load_rows
from explorer.ui.rows.band_curve import BandCurve, column_rows, span_image

COLOUR = QColor("#1f5fa0")


def test_a_steep_segment_lights_the_rows_it_crosses_in_each_column():
    top, bottom = column_rows(np.array([0.5, 2.5]), np.array([0.0, 20.0]), 0, 4)
    assert (top[:3].tolist(), bottom[:3].tolist()) == ([0, 5, 15], [4, 14, 20])
    assert np.isnan(top[3]) and np.isnan(bottom[3])  # the line ends in column 2
    first, pixels = span_image(top, bottom, 0, 30, 0xFF102030)
    assert first == 0 and np.flatnonzero(pixels[:, 1]).tolist() == list(range(5, 15))
    assert not pixels[:, 3].any()


def test_a_flat_line_lights_one_pixel_per_column():
    xd = np.arange(0.0, 50.0, 0.25)  # 4 values per column
    top, bottom = column_rows(xd, 7.2 + 0.001 * xd, 0, 40)
    first, pixels = span_image(top, bottom, 0, 20, 0xFF000000)
    assert first == 7 and pixels.shape == (1, 40) and (pixels != 0).all()


def test_values_that_are_not_finite_break_the_line():
    xd = np.arange(20, dtype=np.float64)
    yd = np.where((xd >= 8) & (xd <= 11), np.inf, 5.0)
    yd[3] = np.nan
    top, _ = column_rows(xd, yd, 0, 20)
    assert np.isnan(top[8:11]).all() and np.isfinite(top[[0, 5, 13, 18]]).all()


def _plot(qtbot, y: np.ndarray, spans: bool, width: float = 1.0) -> np.ndarray:
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.setBackground("w")
    curve = BandCurve(pen=pg.mkPen(COLOUR, width=width), connect="finite")
    if not spans:
        curve._spans_apply = lambda p: False  # Qt's stroke of the same item
    widget.addItem(curve)
    curve.setData(np.arange(len(y)), y)
    widget.setRange(xRange=(0, len(y) - 1), yRange=(-4, 4), padding=0.02)
    widget.resize(700, 260)
    widget.show()
    qtbot.waitExposed(widget)
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    rows = [
        np.frombuffer(image.constScanLine(r), dtype=np.uint8, count=image.width() * 3)
        for r in range(image.height())
    ]
    rgb = np.stack(rows).reshape(image.height(), image.width(), 3).astype(int)
    return (np.abs(rgb - np.array(COLOUR.getRgb()[:3])).max(axis=2) <= 8).astype(bool)


@pytest.fixture
def dense_row(tmp_path) -> np.ndarray:
    """A 4096-wide BF16 row read back from a real safetensors file."""
    matrix = np.random.default_rng(3).standard_normal((4, 4096)) * np.linspace(0.2, 1.5, 4096)
    write_safetensors(
        tmp_path / "model.safetensors",
        {"model.embed_tokens.weight": matrix.astype(ml_dtypes.bfloat16)},
    )
    model = open_model(tmp_path / "model.safetensors", tokenizer=False)
    return load_rows(model, [2])[0].values.astype(np.float64)


def _widened(lit: np.ndarray) -> np.ndarray:
    """`lit` and the pixels left and right of it."""
    out = lit.copy()
    out[:, 1:] |= lit[:, :-1]
    out[:, :-1] |= lit[:, 1:]
    return out


def test_a_dense_row_lights_the_same_pixels_as_the_stroke(qtbot, dense_row):
    spans, stroke = _plot(qtbot, dense_row, True), _plot(qtbot, dense_row, False)
    columns = np.flatnonzero(stroke.any(axis=0))
    assert len(columns) > 500 and (spans.any(axis=0) == stroke.any(axis=0)).all()
    # Qt's fixed-point stroke hands a few rows of a near-vertical segment to the next column
    astray = (spans & ~_widened(stroke)).sum() + (stroke & ~_widened(spans)).sum()
    assert astray < 0.001 * stroke.sum() and (spans != stroke).sum() < 0.01 * stroke.sum()


def test_a_sparse_thin_line_is_stroked_as_before(qtbot, dense_row):
    sparse = dense_row[:200]
    assert (_plot(qtbot, sparse, True) == _plot(qtbot, sparse, False)).all()


@pytest.mark.parametrize("values", [4096, 200])
def test_a_three_pixel_line_covers_what_the_stroke_covers(qtbot, dense_row, values):
    """Presentation mode's lines: a square pen's runs, within a pixel of Qt's stroke."""
    y = dense_row[:values]
    spans, stroke = _plot(qtbot, y, True, width=3), _plot(qtbot, y, False, width=3)
    grown = [_widened(_widened(lit.T).T) for lit in (spans, stroke)]  # a pixel every way
    astray = (spans & ~grown[1]).sum() + (stroke & ~grown[0]).sum()
    assert stroke.sum() > 2000 and astray < 0.002 * stroke.sum()


def test_a_new_range_after_the_first_paint_is_drawn_whole(qtbot, dense_row):
    """The spans follow the view: a row painted once at a narrow range, then shown whole (a
    new row, presentation mode), reaches its extremes and is not clipped flat."""
    y = dense_row[:384] / np.abs(dense_row[:384]).max()  # from -1 to 1
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.setBackground("w")
    curve = BandCurve(pen=pg.mkPen(COLOUR, width=3), connect="finite")
    widget.addItem(curve)
    curve.setData(np.arange(len(y)), y)
    widget.setRange(xRange=(0, len(y) - 1), yRange=(-0.3, 0.3), padding=0)
    widget.resize(700, 300)
    widget.show()
    qtbot.waitExposed(widget)
    widget.grab()  # painted once at the narrow range
    widget.setRange(yRange=(-1.1, 1.1), padding=0)
    vb = widget.getPlotItem().vb
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    lit = [
        r
        for r in range(image.height())
        for x in range(0, image.width(), 2)
        if QColor(image.pixel(x, r)).name() == COLOUR.name()
    ]
    top = vb.mapViewToScene(pg.Point(0, 1.0)).y()
    bottom = vb.mapViewToScene(pg.Point(0, -1.0)).y()
    assert min(lit) <= top + 3 and max(lit) >= bottom - 3
