"""The two-model view on two tiny real models with different vocabularies and dimensions: the
controller's answers checked against numpy, the view showing them, the window's File menu,
cancel, presentation mode, and sessions that name a second model."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from explorer.app.controllers.compare import CompareController
from explorer.app.jobs import Jobs
from explorer.app.state import AppState
from explorer.ui.compare.feature import wire
from explorer.ui.compare.view import CompareView
from explorer.ui.window.main_window import MainWindow
from tests.support.models import word_model
from tests.support.ui import activate, idle, small_fonts

B_WORDS = ["cat", "dog", "zebra", "the", "moon", "kitten", "sun", "mat", "tree", "banana", "x"]


def vocab(folder) -> dict[str, int]:
    data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    return data["model"]["vocab"]


@pytest.fixture
def models(tmp_path):
    a, ea = word_model(tmp_path / "a", rows=16, dim=8, dtype=np.float32)
    b, eb = word_model(
        tmp_path / "b", rows=len(B_WORDS) + 3, dim=12, seed=7, dtype=np.float32, words=B_WORDS
    )
    return a, ea, b, eb


def top_k(m: np.ndarray, q: int, k: int, hide: np.ndarray | None = None) -> list[int]:
    m = m.astype(np.float64)
    cos = m @ m[q] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[q]))
    cos[q] = -np.inf
    if hide is not None:
        cos[hide] = -np.inf  # rows the other model cannot align are in neither list
    order = np.lexsort((np.arange(len(cos)), -cos))
    return order[np.isfinite(cos[order])][:k].tolist()


@pytest.fixture
def inline(qtbot, models):
    a, *_ = models
    state = AppState(Jobs(sync=True))
    controller, view = CompareController(state), CompareView()
    wire(controller, view)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    controller.method, controller.points, controller.sample = "pca", 12, 50
    state.open(a)
    activate(qtbot, controller)
    return state, controller, view


def test_neighbors_maps_and_overlap_equal_numpy(qtbot, models, inline):
    a, ea, b, eb = models
    state, c, view = inline
    assert c.pair is None and "Compare With" in view.banner.text()
    c.set_other(b)
    va, vb = vocab(a), vocab(b)
    shared = set(va) & set(vb)
    assert c.pair is not None and c.pair.alignment.shared == len(shared)
    assert f"<b>{len(shared):,}</b> shared tokens" in view.banner.text()
    cat_a, cat_b = va["cat"], vb["cat"]
    state.select([cat_a])
    qtbot.waitUntil(lambda: c.token is not None and c.overlap is not None, timeout=20000)
    comp = c.token.comparison
    assert comp.b_id == cat_b
    align = c.pair.alignment
    ids_a = top_k(ea, cat_a, 10, np.flatnonzero(align.a_to_b < 0))
    ids_b = top_k(eb, cat_b, 10, np.flatnonzero(align.b_to_a < 0))
    assert [r.id for r in comp.a] == ids_a and [r.id for r in comp.b] == ids_b
    name_a = {i: w for w, i in va.items()}
    name_b = {i: w for w, i in vb.items()}
    both = {name_a.get(i) for i in ids_a} & {name_b.get(j) for j in ids_b} - {None}
    assert comp.overlap == len(both)
    # the view: B's table, shared rows ticked and bold
    rows_b = view.in_b.source.rows
    assert [r[3] == "✓" for r in rows_b] == [name_b.get(j) in both for j in ids_b]
    assert view.in_b.source.bold == {j for j in ids_b if name_b.get(j) in both}
    assert f"<b>{len(both)} of {len(ids_a)}</b> neighbours in both" in view.token.text()
    # the maps: the same tokens in both, B's ids are the same words
    maps = c.token.maps
    assert maps.a_ids[0] == cat_a and len(maps) == len(shared) < c.points  # all shared tokens
    assert [name_a[int(i)] for i in maps.a_ids] == [name_b[int(j)] for j in maps.b_ids]
    assert len(view.map_a.scatter.data) == len(view.map_b.scatter.data) == len(shared)
    # the histogram: every shared token with usable rows in both was sampled (sample > shared)
    dist = c.overlap.distribution
    assert len(dist.ids) == len(shared)
    heights = view.histogram.bars.opts["height"]
    assert heights.sum() == len(shared) and len(heights) == 11
    for i, overlap in zip(dist.ids.tolist(), dist.overlaps.tolist(), strict=True):
        j = vb[name_a[i]]
        near_a = top_k(ea, i, 10, np.flatnonzero(align.a_to_b < 0))
        near_b = top_k(eb, j, 10, np.flatnonzero(align.b_to_a < 0))
        mine = {name_a.get(x) for x in near_a} & {name_b.get(y) for y in near_b}
        assert overlap == len(mine - {None})


def test_a_token_missing_from_b_says_so_and_close_stops(qtbot, models, inline):
    a, _, b, _ = models
    state, c, view = inline
    c.set_other(b)
    state.select([vocab(a)["hello"]])  # not in B's words
    qtbot.waitUntil(lambda: "no token with the same bytes" in view.token.text(), timeout=30000)
    assert c.token is None
    view.stop.click()
    assert c.other is None and c.pair is None and "Compare With" in view.banner.text()


def test_k_change_recomputes_with_the_new_k(qtbot, models, inline):
    a, _, b, _ = models
    state, c, view = inline
    c.set_other(b)
    state.select([vocab(a)["cat"]])
    qtbot.waitUntil(lambda: c.token is not None and c.overlap is not None, timeout=20000)
    view.k.setValue(4)
    qtbot.waitUntil(
        lambda: c.token is not None and len(c.token.comparison.a) == 4 and c.overlap is not None,
        timeout=20000,
    )
    assert c.overlap.distribution.k == 4 and len(view.histogram.bars.opts["height"]) == 5


@pytest.fixture
def window(make_window, models):
    """window(with_model=True): a main window that maps with PCA, with model A open."""

    def make(with_model: bool = True) -> MainWindow:
        win = make_window(models[0] if with_model else None)
        win.compare.controller.method = "pca"
        return win

    return make


def test_window_compares_from_the_file_menu_cancels_and_presents(qtbot, models, window):
    a, _, b, _ = models
    win = window()
    texts = [x.text() for x in win.host.menu("file").actions() if x.isVisible()]
    assert "Compare &with…" in texts
    assert texts.index("Compare &with…") == texts.index("Open the &demo model") + 1
    win.state.select([vocab(a)["cat"]])
    c = win.compare.controller
    win.compare.compare_with(b)
    assert win.centre.currentWidget() is win.compare.page
    assert win.compare.page.currentWidget() is win.compare.view
    c.cancel()  # whatever was started is dropped; nothing is left running
    assert not win.compare.view.busy_row.isVisible()
    idle(qtbot, win)
    win.compare.compare_with(b)
    qtbot.waitUntil(lambda: c.token is not None and c.overlap is not None, timeout=60000)
    idle(qtbot, win)
    alignable = int((c.pair.alignment.a_to_b >= 0).sum())
    assert win.compare.view.in_a.source.rowCount() == min(10, alignable - 1) > 0
    small = win.compare.view.map_a.labels[0].textItem.font().pointSizeF()
    win.presenter.enter()
    idle(qtbot, win)
    assert win.compare.view.isVisible() and not win.menuBar().isVisible()
    assert small_fonts(win) == []
    assert win.compare.view.map_a.labels[0].textItem.font().pointSizeF() >= 18 > small
    win.presenter.leave()
    assert win.compare.view.map_a.labels[0].textItem.font().pointSizeF() == small


def test_a_session_keeps_the_second_model_and_reports_it_missing(qtbot, models, window, tmp_path):
    a, _, b, _ = models
    first = window()
    first.compare.compare_with(b)
    qtbot.waitUntil(lambda: first.compare.controller.pair is not None, timeout=60000)
    idle(qtbot, first)
    first.sessions.save_to(tmp_path / "two.eesession.json")
    saved = json.loads((tmp_path / "two.eesession.json").read_text(encoding="utf-8"))
    assert saved["compare"]["path"] == str(b.resolve()) and saved["tab"] == "compare"

    second = window(with_model=False)
    with qtbot.waitSignal(second.sessions.controller.loaded, timeout=30000):
        second.sessions.controller.open(tmp_path / "two.eesession.json")
    c = second.compare.controller
    qtbot.waitUntil(lambda: c.pair is not None, timeout=60000)
    assert c.pair.b.path.resolve() == b.resolve()
    assert second.centre.currentWidget() is second.compare.page
    assert second.compare.page.currentWidget() is second.compare.view

    shutil.move(b, tmp_path / "gone")
    third = window(with_model=False)
    with qtbot.waitSignal(third.sessions.controller.loaded, timeout=30000):
        third.sessions.controller.open(tmp_path / "two.eesession.json")
    qtbot.waitUntil(lambda: "#b91c1c" in third.compare.view.banner.text(), timeout=60000)
    assert third.state.model is not None and third.compare.controller.pair is None


def test_with_nothing_compared_the_page_says_how_at_the_top(qtbot, window):
    win = window()
    win.host.show_tab(win.compare.page)  # its first page: the two-model view
    view = win.compare.view
    qtbot.waitUntil(view.banner.isVisible)
    assert "Compare With" in view.banner.text()
    assert not view.k.isVisible() and not view.points.isVisible()  # no lone spin boxes
    assert view.banner.mapTo(view, view.banner.rect().topLeft()).y() < view.height() / 5
