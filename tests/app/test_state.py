"""AppState without any window: opening models, tokens, selection."""

from __future__ import annotations

import numpy as np

from explorer.app.state import AppState, shared_level
from explorer.core.model.open import open_model


def _open(qtbot, state, path):
    with qtbot.waitSignal(state.modelChanged, timeout=30000):
        state.open(path)
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)


def test_open_tokenize_select(qtbot, tiny_model):
    path, matrix = tiny_model
    state = AppState()
    _open(qtbot, state, path)
    assert state.model.rows == 16
    assert state.levels is not None and state.levels > 0
    with qtbot.waitSignal(state.tokensChanged, timeout=30000) as blocker:
        state.set_text("The cat sat")
    assert [t.id for t in blocker.args[0]] == [3, 4, 5]
    with qtbot.waitSignal(state.tokensChanged, timeout=30000) as blocker:
        state.set_special(True)
    assert [t.id for t in blocker.args[0]] == [1, 3, 4, 5, 2]
    with qtbot.waitSignal(state.selectionChanged) as blocker:
        state.select([4])
    assert blocker.args == [[4]]
    state.select([7], add=True)
    assert state.selection == [4, 7]
    state.select([4], add=True)
    assert state.selection == [7]
    assert state.select_ref("#5") and state.selection == [5]
    assert state.select_ref("kitten") and state.selection == [10]
    with qtbot.waitSignal(state.statusMessage) as blocker:
        assert not state.select_ref("#99")
    assert "out of range" in blocker.args[0]
    assert state.selection == [10]


def test_failed_open_keeps_previous_model(qtbot, tiny_model, tmp_path):
    path, _ = tiny_model
    state = AppState()
    _open(qtbot, state, path)
    old = state.model
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"\xff" * 20)
    with qtbot.waitSignal(state.modelFailed, timeout=30000) as blocker:
        state.open(bad)
    assert "broken.safetensors" in blocker.args[0]
    assert state.model is old
    qtbot.waitUntil(lambda: not state.jobs.busy)


def test_shared_level_is_a_high_quantile_of_sampled_values(tiny_model):
    path, matrix = tiny_model
    model = open_model(path)
    level = shared_level(model)
    values = np.abs(matrix.astype(np.float32))
    assert float(np.quantile(values, 0.999)) == level
    assert 0 < level <= values.max()
