"""The precision view (Compare › Precision): the quant controller's answers against numpy, with
jobs inline, and the view in the window: simulate, the most damaged tokens, a second model."""

from __future__ import annotations

import gguf
import numpy as np
import pytest

from explorer.app.controllers.quant import QuantController
from explorer.app.jobs import Jobs
from explorer.app.state import AppState
from explorer.core.model.open import open_model
from explorer.ui.window.presentation import POINT_SIZE
from tests.support.models import word_model
from tests.support.ui import idle


@pytest.fixture
def models(tmp_path):
    """A (F32) and its BF16 twin (the same rows and vocabulary), and C (another vocabulary)."""
    words = [f"w{i}" for i in range(37)]
    a, ea = word_model(tmp_path / "a", rows=40, dim=64, dtype=np.float32, words=words)
    twin, _ = word_model(tmp_path / "twin", rows=40, dim=64, words=words)
    c, _ = word_model(tmp_path / "c", rows=40, dim=64, words=[f"v{i}" for i in range(37)])
    return a, ea, twin, c


def test_controller_simulates_and_refuses_a_misaligned_model(qtbot, models):
    a, ea, _, c = models
    state = AppState(Jobs(sync=True))
    quant = QuantController(state)
    quant.sample = 25
    shown, failed = [], []
    quant.resultReady.connect(shown.append)
    quant.failed.connect(failed.append)
    state.open(a)
    quant.simulate(["Q8_0", "Q4_0"])
    assert [t.summary["type"] for t in shown[-1].types] == ["Q8_0", "Q4_0"]
    q4 = shown[-1].types[1]
    r = ea.astype(np.float32)
    T = gguf.GGMLQuantizationType.Q4_0
    q = gguf.quants.dequantize(gguf.quants.quantize(r, T), T)
    used = state.model.used_rows
    r64 = r.astype(np.float64)
    rel = np.linalg.norm(q - r64, axis=1) / np.linalg.norm(r64, axis=1)
    worst = np.flatnonzero(used)[np.argsort(-rel[used], kind="stable")]
    assert q4.ids == worst.tolist()  # every used row, worst first
    assert [row[3] for row in q4.rows] == pytest.approx(rel[worst].tolist(), rel=1e-9)
    assert q4.counts.sum() == used.sum() == q4.summary["rows"]
    assert q4.summary["top10_overlap"]["sample"] == 25
    assert q4.summary["top10_overlap_dot"]["sample"] == 25
    assert len(q4.captions) == 4 and "4-bit" in q4.captions[0]
    assert "dot-product" in q4.captions[3]
    quant.compare_with(open_model(c))
    assert "do not align row for row" in failed[-1]


def test_window_precision_view_simulates_and_compares_with_the_twin(qtbot, models, make_window):
    a, _, twin, _ = models
    win = make_window(a)
    win.compare.quant.sample = 20
    view = win.compare.precision
    win.compare.show_precision()
    assert win.centre.currentWidget() is win.compare.page
    assert not view.files.isEnabled() and not view.body.isVisible()
    for name, box in view.types.items():
        box.setChecked(name in ("Q5_1", "Q4_0"))
    view.simulate.click()
    qtbot.waitUntil(lambda: win.compare.quant.shown is not None, timeout=60000)
    idle(qtbot, win)
    assert view.body.isVisible() and view.summary.source.rowCount() == 2
    assert view.damaged.source.rowCount() == win.state.model.used_rows.sum()  # worst first
    first = view.damaged.proxy.index(0, 0)
    view.damaged.clicked.emit(first)
    assert win.state.selection == [view.damaged.source.ids[0]]
    qtbot.waitUntil(lambda: view.plots.currentWidget() is view.two_rows, timeout=30000)
    assert f"#{view.damaged.source.ids[0]}" in view.row.title.text()
    assert len(view.row.error.getData()[0]) == 64  # the row's difference, every dimension
    qtbot.waitUntil(lambda: win.viewer.pair.shown is not None, timeout=30000)
    view.all_values.click()  # the same token's every value, in the Embedding tab
    assert win.centre.currentWidget() is win.viewer
    assert win.viewer.tabs.currentWidget() is win.viewer.pair
    win.compare.show_precision()
    win.compare.compare_with(twin)
    qtbot.waitUntil(lambda: view.files.isEnabled(), timeout=60000)
    win.compare.show_precision()
    failed: list[str] = []
    win.compare.quant.failed.connect(failed.append)
    view.files.click()
    qtbot.waitUntil(
        lambda: (
            (
                win.compare.quant.shown is not None
                and win.compare.quant.shown.types[0].summary["type"] == "BF16"
            )
            or bool(failed)
        ),
        timeout=60000,
    )
    assert failed == []
    idle(qtbot, win)
    assert "twin" in view.banner.text() or "model.safetensors" in view.banner.text()


def test_hint_and_progress_sit_under_the_buttons_before_a_result(qtbot):
    from explorer.ui.compare.precision import PrecisionView

    page = PrecisionView()
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    line = page.banner.fontMetrics().height()
    assert page.banner.isVisible() and not page.body.isVisible()
    # the hint under the buttons, not centred in an empty page
    assert page.banner.y() < page.simulate.geometry().bottom() + 3 * line
    assert page.banner.height() < 4 * line
    page.set_busy(True)
    page.show_started("Quantising demo to Q4_0 (in memory)")
    qtbot.waitUntil(lambda: page.busy_row.isVisible())
    below = page.busy_row.geometry().bottom()
    assert page.busy_row.y() < page.simulate.geometry().bottom() + 3 * line
    assert below <= page.banner.y() < below + 3 * line
    assert page.banner.height() < 4 * line


def test_summary_rows_stay_whole_in_presentation_type(qtbot, models, make_window):
    a = models[0]
    win = make_window(a)
    win.compare.quant.sample = 20
    view = win.compare.precision
    win.compare.show_precision()
    win.compare.quant.simulate(["Q5_1", "Q4_0"])
    qtbot.waitUntil(lambda: win.compare.quant.shown is not None, timeout=60000)
    idle(qtbot, win)

    def rows_fit() -> bool:
        table = view.summary
        needed = table.horizontalHeader().height() + sum(
            table.rowHeight(r) for r in range(table.model().rowCount())
        )
        return table.viewport().height() >= needed - table.horizontalHeader().height()

    assert rows_fit()
    normal = view.summary.height()
    win.presenter.enter()
    idle(qtbot, win)
    qtbot.waitUntil(rows_fit, timeout=5000)
    assert view.summary.height() > normal
    win.compare.quant.simulate(["Q8_0"])  # a result that arrives while presenting
    qtbot.waitUntil(lambda: win.compare.quant.shown.types[0].summary["type"] == "Q8_0")
    idle(qtbot, win)
    title = view.histogram.getPlotItem().titleLabel.opts["size"]
    assert float(title.removesuffix("pt")) >= POINT_SIZE  # the large type, like other titles
    win.presenter.leave()
    idle(qtbot, win)
    qtbot.waitUntil(lambda: view.summary.height() == normal, timeout=5000)
    title = view.histogram.getPlotItem().titleLabel.opts["size"]
    assert float(title.removesuffix("pt")) < POINT_SIZE  # normal type again


def test_the_second_model_button_shows_its_whole_text_in_presentation_type(qtbot):
    from PySide6.QtGui import QFont

    from explorer.ui.compare.precision import NAME_CHARS, PrecisionView

    page = PrecisionView()
    qtbot.addWidget(page)
    page.resize(1000, 700)
    page.show()
    page.set_second_model("SmolLM2-135M-Instruct.Q4_1-with-a-very-long-file-name.gguf")
    assert len(page.files.text()) <= len("Against ") + NAME_CHARS
    big = QFont(page.font())
    big.setPointSize(POINT_SIZE)
    page.setFont(big)  # as presentation mode enlarges the type
    qtbot.waitUntil(lambda: page.files.width() >= page.files.sizeHint().width(), timeout=5000)
    needed = page.files.fontMetrics().horizontalAdvance(page.files.text())
    assert page.files.width() > needed  # not cut to "ainst second mo"


def test_the_token_column_follows_the_type_and_comes_first(qtbot):
    from PySide6.QtGui import QFont

    from explorer.ui.compare.precision import TOKEN, TOKEN_CHARS, PrecisionView

    page = PrecisionView()
    qtbot.addWidget(page)
    page.resize(1000, 700)
    page.show()
    header = page.damaged.horizontalHeader()
    assert header.logicalIndex(1) == TOKEN  # right after the id

    def fits() -> bool:
        chars = TOKEN_CHARS * page.damaged.fontMetrics().averageCharWidth()
        return header.sectionSize(TOKEN) >= chars

    assert fits()
    normal = header.sectionSize(TOKEN)
    big = QFont(page.font())
    big.setPointSize(POINT_SIZE)
    page.setFont(big)  # as presentation mode enlarges the type
    qtbot.waitUntil(lambda: header.sectionSize(TOKEN) > normal and fits(), timeout=5000)
