"""The analysis views (explain, head, statistics) fed by their controllers from real model files
with planted oddities (tests/support/models.py), tied and untied; jobs run inline."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from explorer.app.controllers.explain import ExplainController
from explorer.app.controllers.head import HeadController
from explorer.app.controllers.stats import StatsController
from explorer.app.jobs import Jobs
from explorer.app.state import AppState
from explorer.core.analysis.kinds import KINDS
from explorer.core.map.kind_colors import KIND_RGB
from explorer.ui.analysis.explain_view import ExplainView
from explorer.ui.analysis.feature import wire_explain, wire_head, wire_stats
from explorer.ui.analysis.head_view import HeadView
from explorer.ui.analysis.plots import DimensionPlot
from explorer.ui.analysis.stats_view import StatsView
from tests.support.models import DIM, OUTLIER_DIM, ZERO, planted_model
from tests.support.ui import activate, idle


def _open(tmp_path, tied: bool, dtype: str = "F32"):
    folder, matrix, head = planted_model(tmp_path / "m", dtype, tied)
    state = AppState(Jobs(sync=True))
    return state, folder, matrix, head


def _show(qtbot, view, size=(1100, 700)):
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()


@pytest.mark.parametrize("tied", [True, False])
def test_explain_shows_the_computed_product_and_its_cost(qtbot, tmp_path, tied):
    state, folder, matrix, _ = _open(tmp_path, tied)
    controller, view = ExplainController(state), ExplainView()
    wire_explain(controller, view)
    _show(qtbot, view)
    state.open(folder)
    state.select([ZERO + 3])
    assert controller.latest is None  # not shown: nothing computed
    activate(qtbot, controller)
    e = controller.latest
    assert e is not None and e.id == ZERO + 3
    data = view.diagram.data
    np.testing.assert_array_equal(data.lookup, matrix[ZERO + 3])
    np.testing.assert_array_equal(data.product, e.product)
    assert view.diagram.verdict() == f"✓ identical: {DIM} of {DIM} values"
    costs = view.costs.text()
    assert f"{matrix.shape[0]:,} × {DIM} values × 4 bytes" in costs
    assert ("Output head: tied" in costs) == tied
    assert ("lm_head.weight" in costs) == (not tied)
    view.grab().save(str(tmp_path / "explain.png"))


def test_explain_follows_the_selection_once_it_settles_and_clears(qtbot, tmp_path):
    state, folder, matrix, _ = _open(tmp_path, tied=True)
    controller, view = ExplainController(state), ExplainView()
    wire_explain(controller, view)
    _show(qtbot, view)
    state.open(folder)
    activate(qtbot, controller)
    assert "Select a token" in view.diagram.hint
    state.select([7])
    qtbot.waitUntil(lambda: controller.latest is not None and controller.latest.id == 7)
    np.testing.assert_array_equal(view.diagram.data.lookup, matrix[7])
    state.select([])
    qtbot.waitUntil(lambda: view.diagram.data is None)


@pytest.mark.parametrize(
    ("controller_class", "job"),
    [(ExplainController, "run_explain"), (HeadController, "run_token")],
)
def test_a_new_selection_stops_the_token_job_at_once(
    qtbot, tmp_path, monkeypatch, controller_class, job
):
    """Each of these jobs reads the whole matrix: a click must stop the one for the token before,
    not leave it running until the settled refresh starts the next."""
    import importlib
    import threading

    from explorer.core.errors import Cancelled

    module = importlib.import_module(controller_class.__module__)
    real = getattr(module, job)
    started = threading.Event()
    checks = []

    def slow_for_token_7(model, token_id, *args, ctx):
        if token_id != 7:
            return real(model, token_id, *args, ctx=ctx)
        checks.append(ctx.cancelled)
        started.set()
        while not ctx.cancelled():  # a pass that only a cancel ends
            threading.Event().wait(0.005)
        raise Cancelled("cancelled")

    monkeypatch.setattr(module, job, slow_for_token_7)
    folder, _matrix, _head = planted_model(tmp_path / "m", "F32", tied=False)
    state = AppState()  # jobs on worker threads
    controller = controller_class(state)
    state.open(folder)
    qtbot.waitUntil(lambda: state.model is not None and not state.jobs.busy, timeout=30000)
    controller.set_active(True)
    state.select([7])
    qtbot.waitUntil(started.is_set, timeout=30000)
    state.select([12])
    assert checks[0](), "the job for the token before still runs"
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)
    state.jobs.shutdown()


@pytest.mark.parametrize("tied", [True, False])
def test_statistics_view_shows_the_pass_and_opens_tokens(qtbot, tmp_path, tied):
    state, folder, matrix, _ = _open(tmp_path, tied)
    controller, view = StatsController(state), StatsView()
    wire_stats(controller, view)
    _show(qtbot, view)
    opened = []
    view.tokenActivated.connect(opened.append)
    state.open(folder)
    activate(qtbot, controller)
    shown = controller.latest
    assert shown is not None
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
    counts, edges = np.histogram(norms, bins=len(shown.hist_counts))
    np.testing.assert_array_equal(shown.hist_counts, counts)
    np.testing.assert_allclose(view.norms.curve.xData, edges)
    assert shown.result.outliers == [OUTLIER_DIM]
    assert f"rogue dimensions: {OUTLIER_DIM}" in view.summary.text()
    # the first rogue dimension is plotted across the vocabulary
    assert controller.dimension is not None and controller.dimension.index == OUTLIER_DIM
    np.testing.assert_array_equal(view.dimension.values, matrix[:, OUTLIER_DIM])
    # suspicious tokens: the planted zero row is listed and opens in the viewer on a click
    table = view.suspicious
    assert table.source.ids[0] == ZERO and table.source.rows[0][2] == "all zeros"
    table.clicked.emit(table.proxy.index(0, 1))
    assert opened == [ZERO]
    kinds = {row[0]: row[1] for row in view.kinds.source.rows}
    assert sum(v for k, v in kinds.items() if "word" not in k) == matrix.shape[0]
    view.grab().save(str(tmp_path / "stats.png"))


def test_dimension_view_picks_sorts_and_clicks(qtbot, tmp_path):
    state, folder, matrix, _ = _open(tmp_path, tied=True)
    controller, view = StatsController(state), StatsView()
    wire_stats(controller, view)
    _show(qtbot, view)
    state.open(folder)
    activate(qtbot, controller)
    view.pick.setValue(3)  # as if a bar were clicked
    assert controller.dimension.index == 3
    column = matrix[:, 3].astype(np.float64)
    view.sorted.setChecked(True)
    np.testing.assert_array_equal(view.dimension.curve.yData, np.sort(column))
    # the highest rank is the token with the largest value; a point is found near the click
    top = int(np.argmax(column))
    assert view.dimension.token_at(len(column) - 1) == top
    assert view.dimension.token_at(len(column) - 1.2, float(column[top]), 0.5) == top
    view.sorted.setChecked(False)
    assert view.dimension.token_at(5.0) == 5
    # a real click on the bar chart picks that dimension
    bars = view.dims
    vb = bars.getPlotItem().getViewBox()
    vb.setRange(xRange=(-0.5, DIM - 0.5), padding=0)
    point = bars.mapFromScene(vb.mapViewToScene(QPointF(10, 0)))
    qtbot.mouseClick(bars.viewport(), Qt.MouseButton.LeftButton, pos=point - QPoint(0, 5))
    assert controller.dimension.index == 10


def test_head_view_untied_lists_extremes_neighbors_and_direct_path(qtbot, tmp_path):
    state, folder, matrix, head = _open(tmp_path, tied=False)
    controller, view = HeadController(state, k=5), HeadView()
    wire_head(controller, view)
    _show(qtbot, view)
    opened = []
    view.tokenActivated.connect(opened.append)
    state.open(folder)
    state.select([12])
    activate(qtbot, controller)
    shown = controller.latest
    assert shown is not None and not shown.result.tied
    e, u = matrix.astype(np.float64), head.astype(np.float64)
    with np.errstate(invalid="ignore"):  # the planted zero row
        cos = np.einsum("ij,ij->i", e, u) / (np.linalg.norm(e, axis=1) * np.linalg.norm(u, axis=1))
    cos = cos[np.isfinite(cos)]
    assert view.lowest.source.rows[0][2] == pytest.approx(cos.min())
    assert view.highest.source.rows[0][2] == pytest.approx(cos.max())
    assert int(shown.hist_counts.sum()) == len(cos)
    assert "separate matrix" in view.banner.text() and not view.overview.isHidden()
    token = controller.token.view
    logits = e[12] @ u.T
    assert [r for r in view.direct.source.ids] == list(np.argsort(-logits)[:5])
    assert f"{token.overlap} of 5" in view.token.text()
    view.lowest.clicked.emit(view.lowest.proxy.index(0, 1))
    assert opened == [view.lowest.source.ids[0]]


def test_head_view_tied_says_so_and_still_gives_the_direct_path(qtbot, tmp_path):
    state, folder, matrix, _ = _open(tmp_path, tied=True)
    controller, view = HeadController(state, k=4), HeadView()
    wire_head(controller, view)
    _show(qtbot, view)
    state.open(folder)
    state.select([9])
    activate(qtbot, controller)
    assert "tied" in view.banner.text() and view.overview.isHidden()
    e = matrix.astype(np.float64)
    assert view.direct.source.ids == list(np.argsort(-(e[9] @ e.T))[:4])
    assert "E[t] · Eᵀ" in view.titles[2].text()


def test_head_view_without_a_head_in_the_files_says_so(qtbot, tmp_path):
    state, folder, matrix, _ = _open(tmp_path, tied=True)
    encoder = {"vocab_size": len(matrix), "architectures": ["BertModel"]}  # like the demo
    (folder / "config.json").write_text(json.dumps(encoder))
    controller, view = HeadController(state, k=4), HeadView()
    wire_head(controller, view)
    _show(qtbot, view)
    state.open(folder)
    state.select([9])
    activate(qtbot, controller)
    assert state.model.tied is None
    assert "No output head in these files" in view.banner.text()
    assert state.model.head.words in view.banner.text()  # the words `info` and the CLI use
    assert "as if tied" in view.titles[1].text() and "1 (as if tied)" in view.token.text()
    e = matrix.astype(np.float64)
    assert view.direct.source.ids == list(np.argsort(-(e[9] @ e.T))[:4])


# -- in the window, with real jobs ---------------------------------------------------------------


@pytest.fixture
def window(make_window, tmp_path):
    folder, matrix, _ = planted_model(tmp_path / "m", "BF16", tied=False)
    return make_window(folder), matrix


def test_tabs_compute_only_when_shown_and_a_listed_token_opens_in_the_viewer(qtbot, window):
    win, matrix = window
    tabs = win.analysis
    win.state.select([ZERO])
    idle(qtbot, win)
    assert tabs.explain.latest is None and tabs.stats.latest is None and tabs.head.latest is None
    win.centre.setCurrentWidget(tabs.explain_view)
    qtbot.waitUntil(lambda: tabs.explain.latest is not None, timeout=30000)
    assert tabs.explain_view.diagram.verdict() == f"✓ identical: {DIM} of {DIM} values"
    win.centre.setCurrentWidget(tabs.head_view)
    qtbot.waitUntil(lambda: "zero vector" in tabs.head_view.token.text(), timeout=30000)
    qtbot.waitUntil(lambda: tabs.head.latest is not None, timeout=30000)  # its own lane
    assert "separate" in tabs.head_view.banner.text()  # the all-zero row has no neighbours
    win.state.select([ZERO + 1])
    qtbot.waitUntil(lambda: tabs.head.token is not None, timeout=30000)
    assert tabs.head_view.in_u.source.rowCount() == 10
    win.centre.setCurrentWidget(tabs.stats_view)
    qtbot.waitUntil(lambda: tabs.stats.dimension is not None, timeout=60000)
    idle(qtbot, win)
    table = tabs.stats_view.suspicious
    table.clicked.emit(table.proxy.index(0, 1))
    assert win.state.selection == [ZERO] and win.centre.currentWidget() is win.viewer


def test_colour_by_kind_in_the_map(qtbot, window):
    win, _ = window
    pane = win.map_pane
    win.centre.setCurrentIndex(1)
    pane.source.setCurrentIndex(pane.source.findData("sample"))
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    pane.n.setValue(60)
    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        pane.request_map()
    qtbot.waitUntil(lambda: win.maps.kinds.kinds is not None, timeout=30000)
    idle(qtbot, win)
    pane.colour.setCurrentIndex(pane.colour.findData("kind"))
    view = pane.view
    assert view.colour_mode == "kind"
    codes = win.maps.kinds.kinds.codes[view.ids]
    names = [KINDS[c] for c in codes]
    brushes = view.scatter.data["brush"]
    for name, brush in zip(names, brushes, strict=True):
        assert brush.color().getRgb()[:3] == KIND_RGB[name]
    shown = {item[1].text.split(" (")[0] for item in view.legend.items}
    assert shown == {n.replace("_", " ") for n in names}


def test_dimension_plot_draws_a_whole_vocabulary_as_peaks_per_pixel(qtbot):
    # drawn point by point, a 248k-token dimension took ~60 ms a paint on the GUI thread
    plot = DimensionPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    qtbot.waitExposed(plot)
    values = np.sin(np.arange(200_000) / 50.0)
    plot.set_dimension(0, values, np.argsort(values))
    plot.grab()  # a paint: the view range is known, so the curve can be thinned
    drawn = plot.curve.getData()[0]
    assert len(drawn) < 20 * plot.width()
    np.testing.assert_array_equal(plot.curve.yData, values)  # the data itself is whole
