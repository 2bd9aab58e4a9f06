"""NeighborsController: neighbours of the selection; the fast index built in a child process."""

from __future__ import annotations

import numpy as np

from explorer.app.controllers.neighbors import NeighborsController
from explorer.app.index_process import child_command
from explorer.app.state import AppState


def brute_force_cosine(matrix: np.ndarray, ids: list[int]) -> list[int]:
    m = matrix.astype(np.float64)
    q = m[ids].mean(axis=0)
    scores = m @ q / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    order = [int(i) for i in np.argsort(-scores, kind="stable") if i not in ids]
    return order


def test_selection_gets_exact_neighbours_and_the_fast_index_is_built(qtbot, tiny_model, tmp_path):
    path, matrix = tiny_model
    state = AppState()
    jobs = NeighborsController(state, k=5, cache_dir=tmp_path / "cache")
    with qtbot.waitSignal(
        jobs.fastReadyChanged, timeout=60000, check_params_cb=lambda ready: ready
    ):
        state.open(path)
    assert jobs.fast_ready
    assert list((tmp_path / "cache").rglob("codes.npy")), "the child wrote no index to the cache"
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        state.select([4])
    found = blocker.args[0]
    assert found.ids == (4,)
    assert [int(i) for i in found.result.ids] == brute_force_cosine(matrix, [4])[:5]
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        state.select([7], add=True)
    assert blocker.args[0].ids == (4, 7)
    assert [int(i) for i in blocker.args[0].result.ids] == brute_force_cosine(matrix, [4, 7])[:5]
    with qtbot.waitSignal(jobs.cleared, timeout=30000):
        state.select([])
    qtbot.waitUntil(lambda: not state.jobs.busy, timeout=30000)


def test_child_command_runs_this_interpreter(tiny_model, tmp_path):
    from explorer.core.model import open_model
    from explorer.core.neighbors import NeighborSearcher

    path, _ = tiny_model
    searcher = NeighborSearcher(open_model(path), cache_dir=tmp_path)
    cmd = child_command(searcher)
    assert cmd[1:3] == ["-m", "explorer.app.index_process"]
    assert cmd[3:] == [str(path), "model.embed_tokens.weight", str(tmp_path)]


def test_cancelled_child_build_is_killed_and_leaves_no_index(tiny_model, tmp_path):
    import pytest

    from explorer.app.index_process import build_in_child
    from explorer.core.context import CallbackContext
    from explorer.core.errors import Cancelled
    from explorer.core.model import open_model
    from explorer.core.neighbors import NeighborSearcher

    path, _ = tiny_model
    searcher = NeighborSearcher(open_model(path), cache_dir=tmp_path / "cache")
    asked = []

    def cancelled_once_started() -> bool:  # not before the child starts, always after
        asked.append(1)
        return len(asked) > 1

    with pytest.raises(Cancelled):  # the child is killed the moment it has started
        list(build_in_child(searcher, CallbackContext(cancelled=cancelled_once_started)))
    assert len(asked) >= 2
    assert not searcher.fast_ready
    assert not list((tmp_path / "cache").rglob("codes.npy"))
