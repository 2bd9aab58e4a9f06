"""The neighbours pane alone (pytest-qt), fed with real results from a tiny model."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRect, Qt

from explorer.core.model.open import open_model
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from explorer.ui.neighbors.pane import NeighborsPane, _Rows, bar_and_text_rects, bar_fractions
from tests.support.ui import cell_colours, near


def _search(tmp_path, tiny_model, metric="cosine", k=5):
    folder, _ = tiny_model
    model = open_model(folder)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    return model, searcher.search(query_for_ids(model, [4]), k=k, metric=metric)


def test_shows_rows_and_status(qtbot, tmp_path, tiny_model):
    model, result = _search(tmp_path, tiny_model)
    pane = NeighborsPane()
    qtbot.addWidget(pane)
    pane.resize(360, 320)
    pane.show()
    pane.show_result(result, model.label, model.is_unused, description=model.label(4))
    rows = pane.rows
    assert rows.rowCount() == 5
    for r in range(5):
        assert rows.data(rows.index(r, 0)) == str(r + 1)
        assert rows.data(rows.index(r, 2)) == str(int(result.ids[r]))
        assert rows.data(rows.index(r, 3)) == f"{result.scores[r]:.4f}"
        assert rows.data(rows.index(r, 1)).startswith(model.label(int(result.ids[r])))
    status = pane.status.text()
    assert model.label(4) in status and "exact" in status and "cosine" in status
    assert rows.headerData(3, Qt.Orientation.Horizontal) == "Cosine"
    pane.grab().save(str(tmp_path / "neighbors_pane.png"))


def test_unused_rows_are_marked(qtbot, tmp_path, tiny_model):
    model, result = _search(tmp_path, tiny_model, k=15)
    unused_ids = [i for i in result.ids.tolist() if model.is_unused(i)]
    assert unused_ids, "the tiny model has padding rows beyond its tokenizer"
    pane = NeighborsPane()
    qtbot.addWidget(pane)
    pane.show_result(result, model.label, model.is_unused)
    r = result.ids.tolist().index(unused_ids[0])
    assert "(unused)" in pane.rows.data(pane.rows.index(r, 1))


def test_click_emits_token_id_and_params_signal(qtbot, tmp_path, tiny_model):
    model, result = _search(tmp_path, tiny_model)
    pane = NeighborsPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_result(result, model.label, model.is_unused)
    rect = pane.table.visualRect(pane.rows.index(2, 1))
    with qtbot.waitSignal(pane.tokenActivated) as blocker:
        qtbot.mouseClick(pane.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [int(result.ids[2])]
    with qtbot.waitSignal(pane.paramsChanged):
        pane.metric_box.setCurrentIndex(2)
    assert pane.metric_name == "l2"
    with qtbot.waitSignal(pane.paramsChanged):
        pane.k = 25
    assert pane.k == 25


def test_busy_error_and_l2_and_skipped(qtbot, tmp_path, tiny_model):
    folder, matrix = tiny_model
    pane = NeighborsPane()
    qtbot.addWidget(pane)
    pane.show_busy("Searching neighbours…")
    assert pane.status.text() == "Searching neighbours…" and not pane.table.isEnabled()
    pane.show_error("cannot search: bad input")
    assert pane.rows.rowCount() == 0 and pane.status.text() == "cannot search: bad input"
    model, result = _search(tmp_path, tiny_model, metric="l2")
    result.skipped = 3  # as if three zero rows had been left out
    pane.show_result(result, model.label, model.is_unused)
    assert "3 zero/NaN rows skipped" in pane.status.text() and pane.table.isEnabled()
    assert pane.rows.headerData(3, Qt.Orientation.Horizontal) == "Distance"
    bars = [pane.rows.data(pane.rows.index(r, 3), Qt.ItemDataRole.UserRole + 1) for r in range(5)]
    assert bars[0] == 1.0 and bars == sorted(bars, reverse=True)


def test_bar_fractions():
    assert bar_fractions(np.array([0.9, 0.5, -0.2]), "cosine") == [0.9, 0.5, 0.0]
    assert bar_fractions(np.array([4.0, 2.0]), "dot") == [1.0, 0.5]
    assert bar_fractions(np.array([1.0, 2.0, 4.0]), "l2") == [1.0, 0.5, 0.25]
    assert bar_fractions(np.array([]), "l2") == []


def test_score_bar_never_reaches_the_number():
    for width in (60, 90, 140):
        cell = QRect(10, 0, width, 22)
        for frac in (0.0, 0.3, 1.0):
            bar, text = bar_and_text_rects(cell, 40, frac)
            assert not bar.intersects(text) and text.right() <= cell.right()
            assert text.width() >= 40 and bar.left() >= cell.left()
        full, _ = bar_and_text_rects(cell, 40, 1.0)
        half, _ = bar_and_text_rects(cell, 40, 0.5)
        assert full.width() > half.width() > 0 or width < 60


def test_status_names_the_path_and_the_hidden_rows(qtbot, tmp_path, tiny_model):
    model, result = _search(tmp_path, tiny_model)
    pane = NeighborsPane()
    qtbot.addWidget(pane)
    assert pane.options == (50, "cosine", True)
    pane.show_result(result, model.label, model.is_unused, description="cat", hidden=7)
    status = pane.status.text()
    assert result.path_label in status and "7 unused rows hidden" in status
    with qtbot.waitSignal(pane.paramsChanged):
        pane.hide_box.setChecked(False)
    assert pane.options[2] is False


def test_rows_are_painted_without_asking_the_model_per_cell(
    qtbot, tmp_path, tiny_model, monkeypatch
):
    """The view draws the rows itself: Qt's delegates asked data() for every role of every cell
    (~250 calls, ~5 ms, on each click's new result)."""
    from PySide6.QtGui import QPalette

    model, result = _search(tmp_path, tiny_model, k=15)
    calls = []
    data = _Rows.data
    monkeypatch.setattr(
        _Rows,
        "data",
        lambda rows, index, role=Qt.ItemDataRole.DisplayRole: (
            calls.append(role) or data(rows, index, role)
        ),
    )
    pane = NeighborsPane()  # its rows: the counting class
    qtbot.addWidget(pane)
    pane.resize(360, 420)
    pane.show()
    qtbot.waitExposed(pane)
    pane.show_result(result, model.label, model.is_unused)
    pane.table.selectRow(1)
    qtbot.wait(20)  # the view lays out the new rows
    calls.clear()
    pane.table.viewport().repaint()
    assert calls == []
    image = pane.table.viewport().grab().toImage()
    view = pane.table

    def colours_in(row: int, col: int) -> set[str]:
        return cell_colours(view, image, row, col)

    palette = view.palette()
    highlight = palette.color(QPalette.ColorRole.Highlight).name()
    assert highlight in colours_in(1, 1) and highlight not in colours_in(0, 1)
    text = palette.color(QPalette.ColorRole.Text).name()
    assert any(near(c, text) for c in colours_in(0, 1))  # the token, in the text colour
    assert len(colours_in(0, 3)) > 3  # the score's bar and number
