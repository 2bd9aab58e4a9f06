"""The map pane's rough edges: cancel, colour choice, copy feedback, and a layout that wraps."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from explorer.app.state import AppState
from explorer.core.map import projection
from explorer.core.resources import demo_model_dir
from explorer.ui.map.pane import MapPane
from explorer.ui.widgets.flow_layout import ElidedLabel, FlowLayout


@pytest.fixture
def pane(qtbot):
    state = AppState()
    p = MapPane(state, warm_up=False)
    qtbot.addWidget(p)
    p.resize(1000, 700)
    p.show()
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(demo_model_dir())
    state.select([state.model.tokenizer.find("cat")])
    yield p
    state.jobs.shutdown()


def test_cancel_cluster_colour_and_copy(qtbot, pane):
    projection.warm_up()
    pane.n.setValue(150)
    with qtbot.waitSignal(pane.mapShown, timeout=60000, check_params_cb=lambda final: not final):
        pane.request_map()
    assert pane.title.text().endswith("UMAP running…")
    pane.cancel()
    qtbot.waitUntil(lambda: not pane.controller.lane.busy, timeout=30000)
    assert "running" not in pane.title.text() and "cancelled" in pane.title.text()
    qtbot.waitUntil(lambda: "of 10" in pane.kept_label.text(), timeout=30000)
    assert pane.kept_label.text().startswith("PCA preview keeps")  # not the map to come

    with qtbot.waitSignal(pane.mapShown, timeout=120000, check_params_cb=lambda final: final):
        pane.request_map()
    qtbot.waitUntil(lambda: pane.kept_label.text().startswith("map keeps"), timeout=30000)
    pane.colour.setCurrentIndex(pane.colour.findData("cluster"))
    assert pane.view.colour_mode == "cluster"
    pane.n.setValue(120)
    with qtbot.waitSignal(pane.mapShown, timeout=120000, check_params_cb=lambda final: final):
        qtbot.mouseClick(pane.map_button, Qt.MouseButton.LeftButton)
    assert pane.colour.currentData() == "cluster" and pane.view.colour_mode == "cluster"

    messages = []
    pane.state.statusMessage.connect(messages.append)
    pane.view.select_box(-1e9, -1e9, 1e9, 1e9)
    pane.copy_selection()
    qtbot.waitUntil(lambda: bool(messages) and messages[-1].startswith("Copied 120 tokens"))


def test_controls_wrap_in_a_narrow_pane_and_progress_text_is_elided(qtbot, pane):
    pane.resize(560, 600)
    qtbot.waitUntil(lambda: pane.width() == 560)
    pane.progress.show()
    pane.layout().activate()
    for w in (pane.map_button, pane.cancel_button, pane.export_button, pane.progress):
        g = w.geometry()
        assert w.isVisible() and g.left() >= 0 and pane.mapTo(pane, g.topRight()).x() <= 560
    text = "UMAP epoch 47/500 · optimising the layout of every point on the map"
    pane._progress(text, 0.1)
    shown = pane.progress.text()
    assert shown != text and shown.endswith("…")
    assert pane.progress.fontMetrics().horizontalAdvance(shown) < pane.progress.width()
    assert pane.progress.toolTip() == text
    big = pane.progress.font()
    big.setPointSizeF(big.pointSizeF() * 2)  # presentation mode enlarges the type later
    pane.progress.setFont(big)
    larger = pane.progress.text()
    assert len(larger) < len(shown) and larger.endswith("…")
    assert pane.progress.fontMetrics().horizontalAdvance(larger) < pane.progress.width()


def test_flow_layout_wraps_and_an_elided_label_takes_the_rest(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host)
    boxes = [QWidget() for _ in range(4)]
    for b in boxes:
        b.setFixedSize(100, 20)
        flow.addWidget(b)
    hint = ElidedLabel("a long hint " * 10)
    flow.addWidget(hint)
    host.resize(450, 200)
    host.show()
    flow.activate()
    assert {b.y() for b in boxes} == {0} and hint.y() < 20  # one row: the label never wraps
    assert hint.geometry().right() <= 450 and hint.width() > 0
    host.resize(250, 200)
    flow.activate()
    assert len({b.y() for b in boxes}) == 2  # two boxes a row
    assert flow.heightForWidth(250) > flow.heightForWidth(450)


def test_legend_draws_missing_glyphs_and_the_chosen_ring_is_not_a_cluster_colour(qtbot):
    from PySide6.QtGui import QColor, QFont

    from explorer.core.map import figure
    from explorer.ui.map.chosen import CHOSEN_RING
    from explorer.ui.map.view import drawable

    font = QFont()
    assert drawable("cat (3)", font) == "cat (3)"
    odd = "\U000f0000"  # a private-use plane-15 code point: no font draws it
    assert drawable(f"{odd} (314)", font) == "U+F0000 (314)"
    ring = QColor(CHOSEN_RING)
    palette = [*figure.CATEGORICAL, figure.HIGHLIGHT]
    assert all(
        sum(abs(a - b) for a, b in zip(ring.getRgb()[:3], rgb, strict=True)) > 150
        for rgb in palette
    )


def test_view_frames_the_bulk_and_not_far_off_outliers(make_map_view):
    import numpy as np

    view = make_map_view()
    rng = np.random.default_rng(0)
    coords = rng.standard_normal((1000, 2)).astype(np.float32)
    coords[:5] += 500  # a far-off cluster of special tokens
    ids = np.arange(1000)
    view.set_points(ids, [f"t{i}" for i in ids], coords, similarity=np.zeros(1000))
    (x0, x1), (y0, y1) = view.plot.getViewBox().viewRange()
    assert x1 - x0 < 20 and y1 - y0 < 20  # the bulk fills the view …
    inside = (coords[:, 0] > x0) & (coords[:, 0] < x1) & (coords[:, 1] > y0) & (coords[:, 1] < y1)
    assert inside.mean() > 0.95 and not inside[:5].any()  # … the outliers are off screen


def test_kind_legend_reads_in_dark_presentation_and_grows_with_the_labels(make_map_view):
    import numpy as np
    from PySide6.QtGui import QColor

    view = make_map_view()
    ids = np.arange(40)
    coords = np.random.default_rng(0).standard_normal((40, 2)).astype(np.float32)
    view.set_points(ids, [f"t{i}" for i in ids], coords, similarity=np.zeros(40))
    view.set_kinds(ids % 2, ("latin", "digits"))
    view.set_colour_mode("kind")

    def texts():
        return [label for _, label in view.legend.items]

    assert len(texts()) == 2 and view.legend.isVisible()
    normal = [t.item.boundingRect().height() for t in texts()]
    view.set_dark(True)
    view.set_label_size(26)  # as presentation mode does
    for label in texts():
        assert QColor(label.opts["color"]).lightness() > 200  # light on black
        assert label.item.boundingRect().height() > 1.3 * max(normal)
    view.set_dark(False)
    view.set_label_size(13)
    assert all(QColor(t.opts["color"]).lightness() < 60 for t in texts())
    assert [t.item.boundingRect().height() for t in texts()] == normal


def test_a_map_without_a_query_draws_no_callout_lines(qtbot, make_map_view):
    """Callouts (a label moved out, with a line to its point) are for a query's neighbours; a
    random sample's first tokens by id are no query's neighbours."""
    import numpy as np

    view = make_map_view()
    rng = np.random.default_rng(0)
    coords = rng.standard_normal((300, 2)).astype(np.float32)
    coords[:20] = coords[:20] * 0.01 + 4  # a tight knot of points: no room beside them
    ids = np.arange(300)

    def leaders(similarity):
        view.set_points(ids, [f"tok{i}" for i in ids], coords, similarity=similarity)
        qtbot.waitUntil(lambda: not view.labels_pending, timeout=10000)
        view.visible_labels()
        x, _ = view._labels.leaders.getData()
        return 0 if x is None else len(x)

    near_first = np.where(ids < 20, 1.0, 0.0)  # the knot is the query's neighbourhood
    assert leaders(near_first) > 0  # they may move out, with lines
    assert leaders(None) == 0
