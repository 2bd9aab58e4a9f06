"""Controllers without any window, with every job run inline (Jobs(sync=True))."""

from __future__ import annotations

import numpy as np

from explorer.app.controllers import MapController, RowsController, VocabularyController
from explorer.app.controllers.rows import LOOKUP_LANE
from explorer.app.jobs import Jobs
from explorer.app.state import AppState
from explorer.core.map import projection
from explorer.core.map.pipeline import MapRequest


def test_rows_follow_the_selection_and_clear_with_a_hint(qtbot, tiny_model):
    path, matrix = tiny_model
    state = AppState(Jobs(sync=True))
    rows = RowsController(state)
    shown, hints = [], []
    rows.rowsReady.connect(shown.append)
    rows.cleared.connect(hints.append)
    state.open(path)  # inline: the model is current when open() returns
    assert state.model is not None and hints[-1].startswith("Type some text")
    state.select([4, 7])
    assert [r.id for r in shown[-1]] == [4, 7]
    np.testing.assert_array_equal(shown[-1][0].values, matrix[4].astype(np.float32))
    state.select([])
    assert len(hints) >= 2 and not rows.lane.busy


def test_vocabulary_index_is_rebuilt_for_each_model(qtbot, tiny_model):
    path, _ = tiny_model
    state = AppState(Jobs(sync=True))
    vocab = VocabularyController(state)
    assert vocab.suggestions("kit") == []
    state.open(path)
    assert [m.label for m in vocab.suggestions("kit")] == ["kitten"]
    assert [m.id for m in vocab.suggestions("#5")] == [5]


def test_map_preview_then_final_and_reset_on_a_new_model(qtbot, tiny_model):
    path, _ = tiny_model
    state = AppState(Jobs(sync=True))
    maps = MapController(state)
    shown, busy, resets = [], [], []
    maps.mapReady.connect(shown.append)
    maps.busyChanged.connect(busy.append)
    maps.reset.connect(lambda: resets.append(1))
    state.open(path)
    params = projection.ProjectionParams(method="pca", seed=1)
    maps.request(MapRequest("sample", 12, params, plain=False))  # 12 of 14 rows: specials too
    assert len(shown) == 1 and shown[0].final and len(shown[0].nb) == 12
    assert shown[0].clusters is not None  # computed in the job, not by the view
    assert busy[-2:] == [True, False] and maps.data is shown[0]
    state.open(path)  # another model: the map is gone
    assert maps.data is None and resets == [1, 1]


def test_each_controller_cancels_its_own_lane_when_the_model_changes(qtbot, tiny_model):
    path, _ = tiny_model
    state = AppState()
    rows = RowsController(state)
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(path)
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)
    cancelled = []
    rows.lane.finished.connect(lambda: cancelled.append(LOOKUP_LANE))
    gate_model = state.model
    rows.lane.submit(lambda ctx: ctx.wait(10), label="slow")
    state.set_model(gate_model)
    assert cancelled == [LOOKUP_LANE]
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)


def test_whole_vocabulary_picture_then_layout_then_from_the_cache(qtbot, tmp_path):
    from pathlib import Path

    from explorer.core.map import whole
    from explorer.ui.map.feature import layout_of

    slice_ = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
    state = AppState(Jobs(sync=True))
    maps = MapController(state)
    shown = []
    maps.mapReady.connect(shown.append)
    state.open(slice_)
    params = whole.WholeParams(n_neighbors=8, n_epochs=10, seed=2)
    maps.request_whole(params, only_cached=True)  # never laid out: nothing to show
    assert shown == [] and not maps.running
    maps.request_whole(params)
    assert [d.final for d in shown] == [False, True] and all(d.whole for d in shown)
    picture, final = shown
    assert sorted(final.nb.ids.tolist()) == list(range(2048))  # every row, once
    assert np.array_equal(picture.nb.ids, final.nb.ids) and np.isfinite(final.coords).all()
    assert len(final.norms) == 2048 and final.clusters is not None
    assert layout_of(final) is None  # sessions do not store 2,048 points: the cache has them
    maps.request_whole(params, only_cached=True)  # again: straight from the cache
    assert [d.final for d in shown[2:]] == [True]
    assert np.array_equal(shown[2].coords, final.coords)
