"""EmbeddingViewer on rows read from tiny real safetensors models (real widgets, offscreen)."""

from __future__ import annotations

import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPalette

from explorer.core.model.open import open_model
from explorer.core.rows.numbers import near_square, row_stats
from explorer.core.rows.read import load_rows
from explorer.ui.rows.band_curve import BandCurve
from explorer.ui.rows.style import fmt
from explorer.ui.rows.values_table import (
    BITS,
    EXPONENT,
    HEX,
    INDEX,
    MANTISSA,
    SIGN,
    VALUE,
    ValuesModel,
)
from explorer.ui.rows.viewer import EmbeddingViewer
from tests.support.models import write_model as write_files
from tests.support.paints import LayoutRequests, Paints
from tests.support.tokenizers import word_tokenizer
from tests.support.ui import cell_colours, near

WORDS = ["[UNK]", "the", "cat", "sat", "on", "mat", "dog", "banana", "kitten"]


def write_model(folder: Path, matrix: np.ndarray) -> Path:
    """The embedding alone plus a word tokenizer that never produces the rows past len(WORDS)
    (unused padding rows)."""
    write_files(folder, matrix=matrix, tokenizer=word_tokenizer(WORDS), layers=False)
    return folder


def random_matrix(rows: int, dim: int, dtype, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal((rows, dim)) * 0.3).astype(dtype)


@pytest.fixture
def bf16_model(tmp_path):
    matrix = random_matrix(12, 40, ml_dtypes.bfloat16)
    model = open_model(write_model(tmp_path / "bf16", matrix))
    yield model, matrix
    model.close()


@pytest.fixture
def viewer(qtbot):
    w = EmbeddingViewer()
    qtbot.addWidget(w)
    w.resize(900, 600)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_starts_empty_with_a_hint(viewer):
    assert not viewer.showing_rows
    assert "Click a token" in viewer.hint.text()
    viewer.clear("Reading rows…")
    assert viewer.hint.text() == "Reading rows…"


def test_a_row_is_painted_off_screen_before_the_first_click_and_nothing_of_it_stays(
    qtbot, monkeypatch
):
    """The first click's plots paint without their first-time costs (glyphs, tick labels,
    images): a stand-in row is painted off screen as the viewer first shows, then emptied."""
    painted: list[int] = []
    paint = BandCurve.paint

    def counted(curve, *args):
        painted.append(0 if curve.xData is None else len(curve.xData))
        return paint(curve, *args)

    monkeypatch.setattr(BandCurve, "paint", counted)
    w = EmbeddingViewer()
    qtbot.addWidget(w)
    w.clear("Opening the model…")
    w.resize(900, 600)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: len(painted) > 0, timeout=30000)
    assert max(painted) == 4096  # the stand-in rows, 4096 values
    assert len(w.plot.curves) == 2  # a second curve was made for two rows
    assert w.table.isHidden()  # one row's summary again
    assert not w.showing_rows and w.rows == []
    assert w.hint.text() == "Opening the model…"  # the message shown before stays
    assert w.card.title.text() == "" and w.card.id_chip.text() == ""
    assert all(points(c) == 0 for c in w.plot.curves)
    assert w.plot.y_range is None
    assert w.heatmap.shape == (0, 0)
    assert w.values.model.rowCount() == 0


def test_summary_shows_the_exact_stats_of_the_row(viewer, bf16_model):
    model, matrix = bf16_model
    cat = model.tokenizer.find("cat")
    viewer.set_rows(load_rows(model, [cat]))
    assert viewer.showing_rows
    assert viewer.card.isVisible() and not viewer.table.isVisible()
    card = viewer.card
    assert card.title.text() == "cat"
    assert card.id_chip.text() == f"#{cat}"
    assert card.dtype_chip.text() == "BF16 · 40 values"
    v = matrix[cat].astype(np.float64)  # independent: straight from the array we wrote
    expected = {
        "norm": np.sqrt((v * v).sum()),
        "mean": v.mean(),
        "std": v.std(),
        "min": v.min(),
        "max": v.max(),
    }
    for key, x in expected.items():
        label = card.values[key]
        shown = float(label.toolTip().rsplit(": ", 1)[1])  # the tooltip holds the exact float
        assert shown == pytest.approx(x, rel=1e-12, abs=1e-15)
        assert label.text() == fmt(shown)
    peak = int(np.argmax(np.abs(v)))
    assert card.values["argmax_abs"].text() == f"{fmt(float(v[peak]))} at {peak}"
    assert card.unused_badge.isHidden()


def test_unused_row_shows_the_badge(viewer, bf16_model):
    model, _ = bf16_model
    unused = len(WORDS) + 1
    assert model.is_unused(unused)
    viewer.set_rows(load_rows(model, [unused]))
    assert not viewer.card.unused_badge.isHidden()
    assert viewer.card.unused_badge.isVisible()
    viewer.set_rows(load_rows(model, [2, unused]))  # in the multi-row table too
    assert "unused" in viewer.table.item(1, 0).text()
    assert "unused" not in viewer.table.item(0, 0).text()


def _column(viewer, col, role=Qt.ItemDataRole.DisplayRole):
    m = viewer.values.model
    return [m.data(m.index(i, col), role) for i in range(m.rowCount())]


def test_table_values_and_bf16_bits_match_an_independent_decoding(viewer, bf16_model):
    model, matrix = bf16_model
    viewer.tabs.setCurrentWidget(viewer.values)
    viewer.set_rows(load_rows(model, [3]))
    row = matrix[3]
    as_f32 = row.astype(np.float32)
    assert viewer.values.model.rowCount() == 40
    assert _column(viewer, INDEX) == [str(i) for i in range(40)]
    # value: exact float32, and its text reads back as the very same float32
    assert _column(viewer, VALUE, Qt.ItemDataRole.UserRole) == [float(x) for x in as_f32]
    assert [np.float32(t) for t in _column(viewer, VALUE)] == list(as_f32)
    # bfloat16 is the top half of the float32 bit pattern
    words = [struct.unpack("<I", struct.pack("<f", float(x)))[0] >> 16 for x in as_f32]
    assert _column(viewer, HEX) == [f"0x{w:04X}" for w in words]
    assert _column(viewer, SIGN, Qt.ItemDataRole.UserRole) == [w >> 15 for w in words]
    assert _column(viewer, EXPONENT, Qt.ItemDataRole.UserRole) == [(w >> 7) & 0xFF for w in words]
    assert _column(viewer, MANTISSA, Qt.ItemDataRole.UserRole) == [w & 0x7F for w in words]
    bits = [f"{w:016b}" for w in words]
    assert _column(viewer, BITS) == [f"{b[0]} {b[1:9]} {b[9:]}" for b in bits]
    # each value is what its fields say: (−1)^s × 2^(e−127) × (1 + m/128)
    for x, w in zip(as_f32, words, strict=True):
        s, e, m = w >> 15, (w >> 7) & 0xFF, w & 0x7F
        assert (-1) ** s * 2.0 ** (e - 127) * (1 + m / 128) == float(x)


def test_table_f16_bits_with_special_values(viewer, tmp_path):
    special = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, 1.0, -2.5, 65504.0, 0.333], dtype=np.float16
    )
    matrix = random_matrix(10, 10, np.float16)
    matrix[1] = special
    model = open_model(write_model(tmp_path / "f16", matrix))
    viewer.tabs.setCurrentWidget(viewer.values)
    try:
        viewer.set_rows(load_rows(model, [1]))
    finally:
        model.close()
    words = [struct.unpack("<H", struct.pack("<e", float(x)))[0] for x in special]
    assert _column(viewer, HEX) == [f"0x{w:04X}" for w in words]
    assert _column(viewer, SIGN, Qt.ItemDataRole.UserRole) == [w >> 15 for w in words]
    assert _column(viewer, EXPONENT, Qt.ItemDataRole.UserRole) == [(w >> 10) & 0x1F for w in words]
    assert _column(viewer, MANTISSA, Qt.ItemDataRole.UserRole) == [w & 0x3FF for w in words]
    tips = _column(viewer, SIGN, Qt.ItemDataRole.ToolTipRole)
    assert "infinity" in tips[2] and tips[3].startswith("−infinity")
    assert "NaN" in tips[4] and "subnormal" in tips[5]
    assert tips[6] == "+1 × 2^0 × (1 + 0/1024)"
    values = _column(viewer, VALUE, Qt.ItemDataRole.UserRole)
    assert values[:4] == [0.0, -0.0, np.inf, -np.inf] and np.isnan(values[4])
    assert values[8] == 65504.0
    assert viewer.card.nonfinite_badge.isVisible()


def test_table_paints_each_field_in_its_colour_without_asking_the_model_per_cell(
    viewer, bf16_model
):
    """The view draws the model's text itself: a screenful cost ~13 ms per click when Qt's
    delegate asked data() for seven roles of every cell."""
    model, _ = bf16_model
    calls = []

    class CountingModel(ValuesModel):
        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            calls.append(role)
            return super().data(index, role)

    table = viewer.values
    table.model = CountingModel(table)
    table.view.setModel(table.model)
    viewer.tabs.setCurrentWidget(table)
    viewer.set_rows(load_rows(model, [3]))
    table.show_index(5)  # selected: drawn in the highlight's text colour
    calls.clear()
    table.view.viewport().repaint()
    assert calls == []
    image = table.view.viewport().grab().toImage()
    view, m = table.view, table.model

    def colours_in(row: int, col: int) -> set[str]:
        return cell_colours(view, image, row, col)

    for field in (SIGN, EXPONENT, MANTISSA):
        ink = m.colors[field].name()
        assert any(near(c, ink) for c in colours_in(0, field))
        assert any(near(c, ink) for c in colours_in(0, BITS))  # the field's bits, same colour
    highlight = view.palette().color(QPalette.ColorRole.Highlight).name()
    assert highlight in colours_in(5, VALUE) and highlight not in colours_in(4, VALUE)
    text = view.palette().color(QPalette.ColorRole.Text).name()
    assert any(near(c, text) for c in colours_in(2, VALUE))  # the number itself is drawn


def test_column_headers_explain_the_fields(viewer, bf16_model):
    model, _ = bf16_model
    viewer.tabs.setCurrentWidget(viewer.values)
    viewer.set_rows(load_rows(model, [2]))
    m = viewer.values.model
    tip = {
        c: m.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        for c in (SIGN, EXPONENT, MANTISSA)
    }
    assert "Sign bit" in tip[SIGN]
    assert "8 bits, biased by 127" in tip[EXPONENT]
    assert "7 bits" in tip[MANTISSA]


def test_table_scrolls_through_a_4096_row(viewer, tmp_path):
    matrix = random_matrix(10, 4096, ml_dtypes.bfloat16, seed=3)
    model = open_model(write_model(tmp_path / "wide", matrix))
    try:
        viewer.set_rows(load_rows(model, [5]))
    finally:
        model.close()
    viewer.tabs.setCurrentWidget(viewer.values)
    viewer.values.show_index(4095)
    view = viewer.values.view
    last = view.indexAt(view.viewport().rect().center()).row()
    assert 4000 < last <= 4095
    assert viewer.values.model.data(
        viewer.values.model.index(4095, VALUE), Qt.ItemDataRole.UserRole
    ) == float(matrix[5, 4095])
    viewer.values.peak.click()
    peak = int(np.argmax(np.abs(matrix[5].astype(np.float32))))
    assert view.selectionModel().selectedRows()[0].row() == peak
    assert viewer.values.goto.value() == peak


def test_plot_and_heatmap_show_the_row(viewer, bf16_model):
    model, matrix = bf16_model
    viewer.set_rows(load_rows(model, [4]))
    values = matrix[4].astype(np.float32)
    x, y = viewer.plot.curves[0].getData()
    np.testing.assert_array_equal(x, np.arange(40))
    np.testing.assert_array_equal(y, values)
    img = viewer.heatmap.image.image
    assert img.shape == near_square(40)
    np.testing.assert_array_equal(img.ravel()[:40], values)
    assert np.isnan(img.ravel()[40:]).all()
    peak = float(np.abs(values).max())
    assert tuple(viewer.heatmap.image.getLevels()) == (-peak, peak)  # symmetric, from the row
    viewer.set_levels(2.5)  # shared levels for the whole model
    assert tuple(viewer.heatmap.image.getLevels()) == (-2.5, 2.5)
    assert tuple(viewer.heatmap.bar.levels()) == (-2.5, 2.5)
    viewer.set_rows(load_rows(model, [5]))
    assert tuple(viewer.heatmap.image.getLevels()) == (-2.5, 2.5)
    viewer.set_levels(None)
    peak5 = float(np.abs(matrix[5].astype(np.float32)).max())
    assert tuple(viewer.heatmap.image.getLevels()) == (-peak5, peak5)


def test_heatmap_cells_map_to_row_indices(viewer, bf16_model, qtbot):
    model, matrix = bf16_model
    viewer.set_rows(load_rows(model, [4]))
    rows, cols = viewer.heatmap.shape
    vb = viewer.heatmap.plot.vb
    for r, c in ((0, 0), (0, cols - 1), (1, 2), (rows - 1, 0)):
        scene = vb.mapViewToScene(QPointF(c + 0.5, r + 0.5))
        assert viewer.heatmap._index_at(scene) == r * cols + c
    plot_vb = viewer.plot.getPlotItem().vb
    qtbot.waitUntil(lambda: plot_vb.viewRange()[0][1] >= 39)  # auto-range runs before a paint
    assert viewer.plot._index_at(plot_vb.mapViewToScene(QPointF(10.2, 0.0))) == 10
    assert viewer.plot._index_at(plot_vb.mapViewToScene(QPointF(39.4, 0.0))) == 39
    with_signal = []
    viewer.heatmap.hovered.connect(with_signal.append)
    viewer.heatmap._mouse_moved((vb.mapViewToScene(QPointF(2.5, 1.5)),))
    assert with_signal == [cols + 2]
    assert viewer.readout.text().startswith(f"index {cols + 2} ")
    assert str(matrix[4].astype(np.float32)[cols + 2]) in viewer.readout.text()


def test_several_rows_overlay_and_cosine_matrix(viewer, bf16_model, qtbot):
    model, matrix = bf16_model
    ids = [model.tokenizer.find(w) for w in ("cat", "dog", "banana")]
    viewer.set_rows(load_rows(model, ids))
    assert viewer.table.isVisible() and not viewer.card.isVisible()
    assert viewer.table.rowCount() == 3
    assert [viewer.table.item(r, 0).text() for r in range(3)] == ["cat", "dog", "banana"]
    assert len(viewer.plot.curves) == 3
    for curve, i in zip(viewer.plot.curves, ids, strict=True):
        np.testing.assert_array_equal(curve.getData()[1], matrix[i].astype(np.float32))
    pens = [curve.opts["pen"].color().name() for curve in viewer.plot.curves]
    assert len(set(pens)) == 3  # distinct colours
    # the table is the legend: each row's swatch has its curve's colour (nothing over the data)
    swatches = [
        QColor(viewer.table.item(r, 0).data(Qt.ItemDataRole.DecorationRole)).name()
        for r in range(3)
    ]
    assert swatches == pens
    # cosine similarities against an independent numpy computation
    v = matrix[ids].astype(np.float64)
    expected = (v @ v.T) / np.outer(np.linalg.norm(v, axis=1), np.linalg.norm(v, axis=1))
    np.testing.assert_allclose(viewer.cosine.matrix, expected, rtol=0, atol=1e-12)
    viewer.tabs.setCurrentWidget(viewer.cosine)  # its table is filled when shown
    shown = [
        [viewer.cosine.table.item(r, c).data(Qt.ItemDataRole.UserRole) for c in range(3)]
        for r in range(3)
    ]
    np.testing.assert_allclose(shown, expected, rtol=0, atol=1e-12)
    assert viewer.cosine.table.item(0, 1).text() == f"{expected[0, 1]:.3f}".replace("-", "−")
    assert viewer.cosine.table.horizontalHeaderItem(2).text() == f"banana  #{ids[2]}"
    assert viewer.tabs.isTabEnabled(2)
    cos_col = viewer.table.columnCount() - 1
    assert viewer.table.item(1, cos_col).data(Qt.ItemDataRole.UserRole) == pytest.approx(
        expected[0, 1], abs=1e-12
    )


def test_clicking_a_row_of_the_summary_inspects_it(viewer, bf16_model, qtbot):
    model, matrix = bf16_model
    ids = [model.tokenizer.find(w) for w in ("cat", "dog", "banana")]
    viewer.tabs.setCurrentWidget(viewer.values)
    viewer.set_rows(load_rows(model, ids))
    assert viewer.values.model.row.id == ids[0]
    table = viewer.table
    rect = table.visualRect(table.model().index(2, 1))
    with qtbot.waitSignal(viewer.rowActivated) as blocker:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [ids[2]]
    assert viewer.current_row.id == ids[2]
    assert viewer.values.model.row.id == ids[2]
    np.testing.assert_array_equal(
        viewer.heatmap.image.image.ravel()[:40], matrix[ids[2]].astype(np.float32)
    )
    # a new selection that still holds banana keeps showing it
    viewer.set_rows(load_rows(model, [ids[1], ids[2]]))
    assert viewer.current_row.id == ids[2]


def test_clear_empties_everything(viewer, bf16_model):
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [2, 3]))
    viewer.clear()
    assert not viewer.showing_rows
    assert viewer.hint.text() == "Click a token to see its embedding"
    assert viewer.rows == [] and viewer.current_row is None
    assert viewer.values.model.rowCount() == 0
    assert all(points(c) == 0 for c in viewer.plot.curves)
    assert len(viewer.plot.curves) == 2  # kept, empty, for the next selections
    scene_items = len(viewer.plot.scene().items())
    viewer.set_rows(load_rows(model, [4]))
    viewer.set_rows(load_rows(model, [4, 5]))
    assert len(viewer.plot.scene().items()) == scene_items  # no curve made or removed again
    viewer.tabs.setCurrentWidget(viewer.cosine)
    assert viewer.cosine.table.rowCount() == 2
    viewer.clear()
    assert viewer.heatmap.image.image is None
    assert viewer.cosine.table.rowCount() == 0
    viewer.set_rows(load_rows(model, [2]))
    viewer.set_rows([])  # an empty selection is the empty state too
    assert not viewer.showing_rows


def test_follows_a_dark_palette_and_renders(viewer, bf16_model, tmp_path):
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [2, 6]))
    dark = QPalette(viewer.palette())
    for role, color in (
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.Window, "#2b2b2b"),
        (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.WindowText, "#e6e6e6"),
    ):
        dark.setColor(role, QColor(color))
    viewer.setPalette(dark)
    assert viewer.plot.backgroundBrush().color().name() == "#1e1e1e"
    assert viewer.heatmap.backgroundBrush().color().name() == "#1e1e1e"
    axis_text = viewer.plot.getPlotItem().getAxis("left").textPen().color().name()
    assert axis_text == "#e6e6e6"
    image = viewer.grab().toImage()
    assert image.width() == 900 and image.height() == 600
    colors = {image.pixelColor(x, y).name() for x in range(0, 900, 15) for y in range(0, 600, 15)}
    assert len(colors) > 20  # a drawn window, not a blank one


def test_double_click_in_plot_or_heatmap_opens_the_value_in_the_table(viewer, bf16_model):
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [4]))
    assert viewer.tabs.currentIndex() == 0
    viewer.heatmap.indexClicked.emit(17)
    assert viewer.tabs.currentWidget() is viewer.values
    assert viewer.values.view.selectionModel().selectedRows()[0].row() == 17
    viewer.tabs.setCurrentIndex(0)
    viewer.plot.indexClicked.emit(3)
    assert viewer.tabs.currentWidget() is viewer.values
    assert viewer.values.goto.value() == 3


def test_heatmap_caption_says_when_the_row_exceeds_the_shared_range(viewer, bf16_model):
    model, matrix = bf16_model
    row = load_rows(model, [3])[0]
    peak = float(np.abs(matrix[3].astype(np.float32)).max())
    viewer.set_rows([row])
    viewer.set_levels(peak * 2)
    assert "(model-wide)" in viewer.heatmap_caption.text()
    assert "clipped" not in viewer.heatmap_caption.text()
    viewer.set_levels(peak / 2)
    caption = viewer.heatmap_caption.text()
    assert f"row ±{peak:.4g}, clipped" in caption and "beyond" in viewer.heatmap_caption.toolTip()
    viewer.set_levels(None)  # the row's own range never clips
    assert "clipped" not in viewer.heatmap_caption.text()


def test_a_new_row_repaints_the_plot_once_and_not_the_whole_viewer(viewer, bf16_model, qtbot):
    """Per click the GUI thread paints the plot once (pyqtgraph's auto-range painted it twice),
    and new label texts do not make the tab widget repaint every page (Qt's QTabWidget does)."""
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [1]))
    qtbot.wait(50)
    paints = Paints({"plot": viewer.plot.viewport(), "tabs": viewer.tabs})
    for n, token_id in enumerate([2, 3, 4, 5, 6]):
        before = dict(paints.count)
        viewer.set_rows(load_rows(model, [token_id]))
        qtbot.wait(30)
        assert paints.count["plot"] - before["plot"] == 1, n
    assert paints.largest["tabs"] < 0.25  # a caption's strip, not the page
    ys = viewer.plot.getPlotItem().vb.viewRange()[1]
    values = load_rows(model, [6])[0].values
    assert ys[0] <= values.min() and ys[1] >= values.max()  # the row fits the view


def test_the_overview_under_another_tab_is_not_painted_and_is_painted_once_on_return(
    viewer, bf16_model, qtbot
):
    """Tab pages stay shown, stacked: a page brought back is painted once, not two or three
    times over as a page shown again after being hidden was."""
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [1]))
    qtbot.wait(50)
    viewer.tabs.setCurrentWidget(viewer.values)
    qtbot.wait(50)
    paints = Paints({"plot": viewer.plot.viewport(), "heatmap": viewer.heatmap.viewport()})
    viewer.set_rows(load_rows(model, [2]))  # a click while the values are on top
    qtbot.wait(50)
    assert paints.count == {"plot": 0, "heatmap": 0}
    viewer.tabs.setCurrentIndex(0)
    qtbot.wait(100)
    assert paints.count == {"plot": 1, "heatmap": 1}
    assert viewer.plot.curves[0].yData.tolist() == load_rows(model, [2])[0].values.tolist()


def test_covered_tab_pages_take_no_keyboard_focus(viewer, bf16_model):
    model, _ = bf16_model
    tabs = viewer.tabs
    assert [tabs.widget(i).isEnabled() for i in range(3)] == [True, False, False]
    viewer.set_rows(load_rows(model, [1, 2]))  # two rows: the cosine tab is enabled
    assert tabs.isTabEnabled(2) and not viewer.cosine.isEnabled()  # but its page is covered
    tabs.setCurrentWidget(viewer.cosine)
    assert [tabs.widget(i).isEnabled() for i in range(3)] == [False, False, True]
    viewer.set_rows(load_rows(model, [1]))  # one row: back to the overview (Qt: the next tab)
    assert tabs.currentIndex() == 0
    assert [tabs.widget(i).isEnabled() for i in range(3)] == [True, False, False]
    assert viewer.values.isVisible() and viewer.values.autoFillBackground()  # shown, opaque


def test_titles_in_other_scripts_never_move_the_plots(viewer, bf16_model, qtbot):
    """A Bengali or Tamil title made the card a pixel shorter: the plots below moved, and the
    whole viewer re-laid out and repainted on that click. The card now only grows."""
    import dataclasses

    model, _ = bf16_model
    row = load_rows(model, [2])[0]
    viewer.set_rows([row])
    qtbot.wait(30)
    plot_geometry = viewer.plot.geometry()
    for label in ["cat", "জে", "প্", "ர்கள்", "弗里", "␣अच्छ", "🐱", "Emerald", "x"]:
        viewer.set_rows([dataclasses.replace(row, label=label)])
        qtbot.wait(10)
        assert viewer.card.minimumHeight() >= viewer.card.sizeHint().height(), label
        assert viewer.card.title.height() >= viewer.card.title.sizeHint().height(), label
        assert viewer.plot.geometry() == plot_geometry, label


def test_the_cards_texts_are_selectable_only_under_the_pointer(viewer, bf16_model, qtbot):
    """A selectable label keeps a text control that lays its document out again on every new
    text and asks for a second paint (~1.5 ms of each click for the card). The card's texts are
    selectable while the pointer is over it, the only time a mouse can select them."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    model, _ = bf16_model
    card = viewer.card
    selectable = Qt.TextInteractionFlag.TextSelectableByMouse
    away = QPoint(viewer.width() - 2, viewer.height() - 2)  # the pointer, not over the card
    QTest.mouseMove(viewer, away)
    viewer.set_rows(load_rows(model, [2]))
    qtbot.wait(30)
    paints = Paints({"mean": card.values["mean"], "title": card.title})
    for n in (3, 4, 5):
        viewer.set_rows(load_rows(model, [n]))
        qtbot.wait(30)
    assert paints.count == {"mean": 3, "title": 3}  # once a row (twice when selectable)
    assert not card.values["mean"].textInteractionFlags() & selectable
    QTest.mouseMove(viewer, QPoint(2, 2))
    QTest.mouseMove(card, card.values["mean"].geometry().center())
    qtbot.waitUntil(lambda: bool(card.values["mean"].textInteractionFlags() & selectable))
    assert card.title.textInteractionFlags() & selectable
    QTest.mouseMove(viewer, away)
    qtbot.waitUntil(lambda: not card.title.textInteractionFlags() & selectable)
    assert not card.values["mean"].textInteractionFlags() & selectable


def test_a_labels_copy_menu_keeps_the_cards_texts_selectable(viewer, bf16_model, qtbot):
    """The pointer leaves the card for the label's own menu (Copy, Select All): the texts stay
    selectable, or the menu's Copy would have no text control left to copy from."""
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    model, _ = bf16_model
    card = viewer.card
    viewer.set_rows(load_rows(model, [2]))
    mean = card.values["mean"]
    QTest.mouseMove(card, mean.geometry().center())
    selectable = Qt.TextInteractionFlag.TextSelectableByMouse
    qtbot.waitUntil(lambda: bool(mean.textInteractionFlags() & selectable))
    where = QPoint(5, 5)
    QApplication.sendEvent(
        mean, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, where, mean.mapToGlobal(where))
    )
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None)
    QApplication.sendEvent(card, QEvent(QEvent.Type.Leave))
    assert mean.textInteractionFlags() & selectable
    QApplication.activePopupWidget().close()


def test_a_new_row_re_lays_out_only_the_cards_head(viewer, bf16_model, qtbot):
    """The card's numbers keep their size and its title row stops at a fence: each click re-laid
    out the whole card before (~1.5 ms of a click). A number longer than its room (a mean of
    −1.2e−31) widens it once, for the rows after it."""
    import dataclasses

    model, _ = bf16_model
    row = load_rows(model, [2])[0]
    peak = float(np.abs(row.values).max())
    titles = ["cat", "a much longer title", "জে", "x", "🐱"]
    scales = (1.0, -1e-30, 12345.678, 3e-7, -0.5)

    def show(n: int, title: str, scale: float) -> None:
        values = (row.values / peak * scale).astype(np.float32)
        viewer.set_rows(
            [dataclasses.replace(row, id=n, label=title, values=values, stats=row_stats(values))]
        )
        qtbot.wait(10)
        for key, value in viewer.card.values.items():  # each number whole, not clipped
            shown = value.fontMetrics().horizontalAdvance(value.text())
            assert 0 < shown <= value.contentsRect().width(), (key, value.text())
        assert viewer.card.title.text() == title

    show(0, "the", 1.0)
    card = LayoutRequests(viewer.card)
    for n, (title, scale) in enumerate(zip(titles[:1] + titles[3:], (1.0, 0.7, -0.5), strict=True)):
        show(n, title, scale)
    assert card.count == 0  # rows of a usual size
    for n, (title, scale) in enumerate(zip(titles, scales, strict=True)):
        show(n, title, scale)
    card.count = 0
    for n, (title, scale) in enumerate(zip(reversed(titles), scales, strict=True)):
        show(n, title, scale)
    assert card.count == 0  # any size seen before


def test_plot_scale_is_round_and_steady_across_rows_of_similar_size():
    from explorer.ui.rows.plot import steady_range

    assert steady_range(-0.073, 0.081) == (-0.1, 0.1)  # round, symmetric about 0
    assert steady_range(-0.061, 0.095) == steady_range(-0.09, 0.052)  # the same scale
    assert steady_range(0.01, 0.5) == (0.0, 0.5)  # one sign: from 0
    assert steady_range(-3.0, -1.0) == (-3.0, 0.0)
    low, high = steady_range(4.999, 5.001)  # a narrow band far from 0 keeps its own range
    assert 4.99 < low < 4.999 and 5.001 < high < 5.01
    for lo, hi in [(-0.12, 0.09), (-1e-5, 2e-5), (-7.5, 0.2), (0.3, 1e4)]:
        a, b = steady_range(lo, hi)
        assert a <= lo and b >= hi


def test_plot_scale_stays_while_rows_fit_it():
    from explorer.ui.rows.plot import next_range

    first = next_range(None, -0.073, 0.081)
    assert first == (-0.1, 0.1)
    assert next_range(first, -0.09, 0.052) == first  # fits, fills 90 %
    assert next_range(first, -0.02, 0.045) == first  # fills 45 %: the scale stays
    assert next_range(first, -0.02, 0.03) == (-0.03, 0.03)  # 30 %: a scale of its own
    assert next_range(first, -0.13, 0.05) == pytest.approx((-0.15, 0.15))  # wider: it did not fit
    band = next_range(None, 4.999, 5.001)
    assert next_range(band, 4.9995, 5.0009) == band
    assert next_range(band, 4.0, 6.0) != band


def test_new_scales_never_re_lay_out_the_plot(viewer, bf16_model, qtbot):
    """The value axis has a fixed width: tick labels of another length (0.1, then 0.15, then
    12.5) re-laid out the plot and repainted all of it on a click."""
    import dataclasses

    model, _ = bf16_model
    row = load_rows(model, [2])[0]
    peak = float(np.abs(row.values).max())
    viewer.set_rows([row])
    qtbot.wait(50)
    box = viewer.plot.getPlotItem().vb.sceneBoundingRect()
    for scale in (0.1, 0.15, 12.5, 0.00015, 3.0):
        values = (row.values / peak * scale).astype(np.float32)
        viewer.set_rows([dataclasses.replace(row, values=values)])
        qtbot.wait(30)
        assert viewer.plot.getPlotItem().vb.sceneBoundingRect() == box, scale


def test_the_first_row_moves_nothing(viewer, bf16_model, qtbot):
    """Under the empty state the viewer is laid out for one row from the start (no summary
    table, the card as tall as with a row): the first click re-lays out and repaints nothing
    but what shows the row (the plots moved by the table's and the card's heights before)."""
    model, _ = bf16_model
    qtbot.wait(50)  # the first show's work is done
    where = viewer.plot.mapTo(viewer, viewer.plot.rect().topLeft()), viewer.plot.size()
    viewer.set_rows(load_rows(model, [2]))
    qtbot.wait(30)
    assert (viewer.plot.mapTo(viewer, viewer.plot.rect().topLeft()), viewer.plot.size()) == where
    assert viewer.card.isVisible() and not viewer.table.isVisible()


def test_ctrl_clicking_more_rows_moves_the_plots_at_most_once(viewer, bf16_model, qtbot):
    """Two rows fit in the card's place; the third gives the table room for five at once. It
    grew a row at a time before: each Ctrl+click up to five moved the plots, which were laid
    out and painted again in full (twice, ~50 ms on a 4096-value model)."""
    model, _ = bf16_model
    ids = [1, 2, 3, 4, 5, 6, 7, 8]

    def plot_place():
        return viewer.plot.mapTo(viewer, viewer.plot.rect().topLeft()), viewer.plot.size()

    places = []
    for n in range(1, len(ids) + 1):
        viewer.set_rows(load_rows(model, ids[:n]))
        qtbot.wait(20)
        places.append(plot_place())
    assert places[0] == places[1]  # one row, two rows: the same place
    assert len(set(places[2:])) == 1  # three to eight rows: one place
    assert viewer.table.verticalScrollBar().isVisible()  # eight rows scroll in five rows' room


def test_the_cosine_table_is_filled_when_its_tab_is_shown_not_under_another(
    viewer, bf16_model, qtbot
):
    """Filling the covered Cosine tab on every Ctrl+click re-laid out the whole viewer (~11 ms
    of a two-row click's ~33)."""
    model, _ = bf16_model
    paints = Paints({"plot": viewer.plot.viewport()})
    viewer.set_rows(load_rows(model, [2]))
    qtbot.wait(50)
    before = paints.count["plot"]
    viewer.set_rows(load_rows(model, [2, 3]))
    assert viewer.cosine.table.rowCount() == 0  # under the overview: not filled
    assert viewer.cosine.matrix.shape == (2, 2)  # (the summary table's cosines need it)
    qtbot.wait(50)
    assert paints.count["plot"] == before + 1  # the new curve, once
    viewer.tabs.setCurrentWidget(viewer.cosine)
    assert viewer.cosine.table.rowCount() == 2
    assert "Cosine similarity" in viewer.cosine.caption.text()
    viewer.set_rows(load_rows(model, [2, 3, 4]))  # while shown: filled at once
    assert viewer.cosine.table.rowCount() == 3
    viewer.tabs.setCurrentIndex(0)
    viewer.set_rows(load_rows(model, [5, 6]))
    assert viewer.cosine.table.rowCount() == 3  # the old rows, out of sight, until shown again
    viewer.tabs.setCurrentWidget(viewer.cosine)
    assert viewer.cosine.table.rowCount() == 2


def test_the_plot_follows_the_rows_when_shown_not_under_another_tab(viewer, bf16_model, qtbot):
    """Under the Values & bits tab the overview's plot still did its scene's work on every
    click (~4 ms of one): it now catches up when the overview is shown again."""
    model, matrix = bf16_model
    viewer.set_rows(load_rows(model, [2]))
    viewer.tabs.setCurrentWidget(viewer.values)
    for ids in ([3], [4, 5], [6]):
        viewer.set_rows(load_rows(model, ids))
        qtbot.wait(10)
    assert viewer.values.model.row.id == 6  # the tab shown follows
    np.testing.assert_array_equal(viewer.plot.curves[0].getData()[1], values(matrix, 2))
    viewer.tabs.setCurrentWidget(viewer.overview)
    np.testing.assert_array_equal(viewer.plot.curves[0].getData()[1], values(matrix, 6))
    assert points(viewer.plot.curves[1]) == 0  # the second row's curve emptied
    viewer.set_rows(load_rows(model, [7]))  # while shown: at once
    np.testing.assert_array_equal(viewer.plot.curves[0].getData()[1], values(matrix, 7))
    viewer.tabs.setCurrentWidget(viewer.values)
    viewer.clear()
    viewer.tabs.setCurrentWidget(viewer.overview)
    assert all(points(c) == 0 for c in viewer.plot.curves)


def test_the_values_table_follows_the_row_when_shown_not_under_another_tab(
    viewer, bf16_model, qtbot
):
    """Under the overview the values table was reset, and its caption re-laid out, on every
    click (~1 ms of one): it now catches up when its tab is shown."""
    model, _ = bf16_model
    resets = []
    viewer.values.model.modelReset.connect(lambda: resets.append(viewer.values.model.row))
    viewer.set_rows(load_rows(model, [2]))
    for ids in ([3], [4, 5], [6]):
        viewer.set_rows(load_rows(model, ids))
        qtbot.wait(10)
    assert resets == []
    viewer.tabs.setCurrentWidget(viewer.values)
    assert [r.id for r in resets] == [6] and viewer.values.model.rowCount() == 40
    assert viewer.values.caption.text().startswith(f"{resets[0].label}  #6  ·  40 values")
    viewer.set_rows(load_rows(model, [7, 8]))  # while shown: at once, the current row
    assert viewer.values.model.row.id == 7
    viewer.tabs.setCurrentWidget(viewer.overview)
    viewer.clear()
    viewer.tabs.setCurrentWidget(viewer.values)
    assert viewer.values.model.rowCount() == 0 and viewer.values.caption.text() == ""


def values(matrix: np.ndarray, i: int) -> np.ndarray:
    return matrix[i].astype(np.float32)


def points(curve) -> int:
    x = curve.getData()[0]
    return 0 if x is None else len(x)


def test_adding_a_second_row_leaves_the_tab_bar_alone(viewer, bf16_model, qtbot):
    """Enabling the Cosine tab and counting rows in its title re-laid out and repainted the whole
    tab widget on each Ctrl+click that added a second row, and again on the way back to one."""
    model, _ = bf16_model
    viewer.set_rows(load_rows(model, [2]))
    qtbot.wait(50)
    bar = viewer.tabs.tabBar()
    paints = Paints({"bar": bar, "heatmap": viewer.heatmap.viewport()})
    for ids in ([2, 3], [4], [4, 5], [7]):  # (three rows make the summary taller: all moves)
        viewer.set_rows(load_rows(model, ids))
        qtbot.wait(30)
    assert paints.count["bar"] == 0
    assert paints.count["heatmap"] == 4  # (the page under the bar was painted, once a row)
    viewer.tabs.setCurrentWidget(viewer.cosine)  # one row: the tab says what it needs
    assert "Ctrl+click two or more tokens" in viewer.cosine.caption.text()
    assert viewer.cosine.table.rowCount() == 0 and viewer.cosine.table.isHidden()  # no blank box
    viewer.set_rows(load_rows(model, [7, 8]))  # shown: filled at once
    assert viewer.cosine.table.rowCount() == 2 and viewer.cosine.table.isVisible()
    viewer.set_rows(load_rows(model, [7]))  # a single row on the Cosine tab: the overview
    assert viewer.tabs.currentWidget() is viewer.overview


def test_a_cjk_row_is_drawn_in_characters_not_boxes(viewer, bf16_model, qtbot):
    """The card of a CJK token, grabbed as a picture: with a CJK font installed (packaging/
    apt-packages.txt; the frozen app carries one) its title differs from the same number of
    characters no font has, which every font draws as the same empty box."""
    import dataclasses

    from PySide6.QtGui import QFontDatabase

    if not QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese):
        pytest.skip("no CJK font on this machine: apt-get install fonts-droid-fallback")
    model, _ = bf16_model
    row = load_rows(model, [2])[0]

    def title_picture(label: str):
        viewer.set_rows([dataclasses.replace(row, label=label)])
        qtbot.wait(10)
        return viewer.card.title.grab().toImage()

    cjk = title_picture("##戦犬")
    boxes = title_picture("##\U000f0000\U000f0001")  # private use: no font draws these
    assert cjk != boxes  # in size or in pixels
    assert title_picture("##戦犬") == cjk  # the same text draws the same


def test_row_range_colours_a_row_on_its_own_scale(viewer, bf16_model, qtbot):
    """A model-wide scale set by a few huge dimensions washes a row out; "row range" gives the
    heatmap the row's own range, and only when there is a shared scale to leave."""
    model, _ = bf16_model
    row = load_rows(model, [2])[0]
    viewer.set_rows([row])
    peak = float(np.abs(row.values).max())
    assert not viewer.row_range.isVisible()  # no shared scale yet
    viewer.set_levels(peak * 10)  # an outlier dimension elsewhere sets the model's scale
    assert viewer.row_range.isVisible() and viewer.limit() == pytest.approx(peak * 10)
    viewer.row_range.setChecked(True)
    assert viewer.limit() == pytest.approx(peak)
    assert viewer.heatmap.limit == pytest.approx(peak)
    assert "this row" in viewer.heatmap_caption.text()
    viewer.row_range.setChecked(False)
    assert "model-wide" in viewer.heatmap_caption.text()


def test_two_rows_can_be_plotted_as_their_difference(viewer, bf16_model, qtbot):
    model, _ = bf16_model
    a, b = load_rows(model, [2, 5])
    viewer.set_rows([a])
    assert not viewer.difference.isVisible()
    viewer.set_rows([a, b])
    assert viewer.difference.isVisible() and len(viewer.plot.curves[0].yData) == len(a.values)
    geometry = viewer.plot.geometry()
    viewer.difference.setChecked(True)
    assert len(viewer.plot.rows) == 1
    np.testing.assert_array_equal(viewer.plot.curves[0].yData, a.values - b.values)
    assert "−" in viewer.plot.rows[0].label and viewer.plot.geometry() == geometry
    viewer.difference.setChecked(False)
    assert len(viewer.plot.rows) == 2
