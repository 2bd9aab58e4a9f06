"""View › Random twin: the open model's twin replaces it in every view, and switches back."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.learning.twin_model import TwinEmbedding


def best_cosine(rows: np.ndarray, q: int, used: np.ndarray) -> int:
    """The nearest row by cosine among the rows the tokenizer uses (the pane hides the rest)."""
    m = rows.astype(np.float64)
    cos = m @ m[q] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[q]))
    cos[q] = -np.inf
    cos[~used] = -np.inf
    return int(np.argmax(cos))


def test_the_twin_replaces_the_model_in_every_view_and_switches_back(qtbot, window, tiny_model):
    _, matrix = tiny_model
    real = window.state.model
    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000) as got:
        window.state.select([4])
    assert int(got.args[0].result.ids[0]) == best_cosine(matrix, 4, real.used_rows)
    assert not window.learn.twin_action.isChecked() and window.learn.twin_action.isEnabled()

    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000) as got:
        window.learn.twin_action.trigger()
    twin = window.state.model
    assert isinstance(twin, TwinEmbedding) and twin.real is real
    assert window.state.selection == [4]  # the selection survives the switch
    rows = twin.decode_block(0, twin.rows)
    assert got.args[0].model is twin
    assert int(got.args[0].result.ids[0]) == best_cosine(rows, 4, real.used_rows)
    assert window.learn.twin_action.isChecked() and window.title_label.text().endswith(
        "random twin"
    )

    stats = window.analysis.stats
    with qtbot.waitSignal(stats.resultReady, timeout=60000) as shown:
        stats.refresh()
    norms = shown.args[0].result.norms
    np.testing.assert_allclose(norms, np.linalg.norm(rows.astype(np.float64), axis=1), rtol=1e-5)

    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000) as got:
        window.learn.twin_action.trigger()
    assert window.state.model is real and not window.learn.twin_action.isChecked()
    assert int(got.args[0].result.ids[0]) == best_cosine(matrix, 4, real.used_rows)
    assert not window.title_label.text().endswith("random twin")
    qtbot.waitUntil(lambda: not window.pending, timeout=30000)


def test_the_learn_tab_measures_the_real_model_while_the_twin_is_shown(qtbot, window):
    real = window.state.model
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        window.learn.twin.set_twin(True)
    assert isinstance(window.state.model, TwinEmbedding)
    window.learn.controller.contrastFailed.connect(lambda e: pytest.fail(str(e)))
    with qtbot.waitSignal(window.learn.controller.contrastReady, timeout=60000) as got:
        window.learn.controller.measure_twin()
    measured_real, measured_twin = got.args[0]
    twin_of_real = window.state.model.decode_block(0, real.rows)
    assert measured_real.spread.counts.sum() == measured_twin.spread.counts.sum()
    assert not np.allclose(real.decode_block(0, real.rows), twin_of_real)
    qtbot.waitUntil(lambda: not window.pending, timeout=30000)
