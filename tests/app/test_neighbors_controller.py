"""NeighborsController: neighbours of the selection; the fast index built in a child process."""

from __future__ import annotations

import numpy as np

from explorer.app.controllers.neighbors import INDEX_LANE, NeighborsController
from explorer.app.index_process import child_command
from explorer.app.state import AppState
from explorer.core.search import neighbors as neighbors_core


def brute_force_cosine(matrix: np.ndarray, ids: list[int]) -> list[int]:
    m = matrix.astype(np.float64)
    q = m[ids].mean(axis=0)
    scores = m @ q / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    order = [int(i) for i in np.argsort(-scores, kind="stable") if i not in ids]
    return order


def test_selection_gets_exact_neighbors_and_the_fast_index_is_built(
    qtbot, tiny_model, tmp_path, monkeypatch
):
    monkeypatch.setattr(neighbors_core, "CHEAP_EXACT_VALUES", 0)  # as if the matrix were large
    path, matrix = tiny_model
    state = AppState()
    jobs = NeighborsController(state, k=5, cache_dir=tmp_path / "cache")
    jobs.hide_unused = False
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
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher

    path, _ = tiny_model
    searcher = NeighborSearcher(open_model(path), cache_dir=tmp_path)
    cmd = child_command(searcher)
    assert cmd[1:3] == ["-m", "explorer.app.index_process"]
    assert cmd[3:] == [str(path), "model.embed_tokens.weight", str(tmp_path)]


def test_cancelled_child_build_is_killed_and_leaves_no_index(tiny_model, tmp_path, monkeypatch):
    import pytest

    from explorer.app import child
    from explorer.app.index_process import build_in_child
    from explorer.core.context import JobContext
    from explorer.core.errors import Cancelled
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher

    path, _ = tiny_model
    searcher = NeighborSearcher(open_model(path), cache_dir=tmp_path / "cache")
    ctx = JobContext()
    started = []

    class CancelledOnceStarted(child.Child):  # not before the child starts, at once after
        def _start(self):
            proc = super()._start()
            started.append(proc)
            ctx.cancel()
            return proc

    monkeypatch.setattr("explorer.app.index_process.Child", CancelledOnceStarted)
    with pytest.raises(Cancelled):  # the child is killed the moment it has started
        build_in_child(searcher, ctx)
    assert len(started) == 1 and started[0].poll() is not None
    assert not searcher.fast_ready
    assert not list((tmp_path / "cache").rglob("codes.npy"))


def test_small_model_builds_no_index_and_answers_exactly(qtbot, tiny_model, tmp_path):
    path, matrix = tiny_model
    state = AppState()
    jobs = NeighborsController(state, k=5, cache_dir=tmp_path / "cache")
    jobs.hide_unused = False
    ready = []
    jobs.fastReadyChanged.connect(ready.append)
    state.open(path)
    qtbot.waitUntil(lambda: state.model is not None and not state.jobs.busy, timeout=30000)
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        state.select([4])
    result = blocker.args[0].result
    assert result.path == "exact" and "exact" in result.path_label
    assert [int(i) for i in result.ids] == brute_force_cosine(matrix, [4])[:5]
    assert not state.jobs.lane(INDEX_LANE).busy and True not in ready
    assert not list((tmp_path / "cache").rglob("codes.npy"))


def test_unused_rows_are_hidden_and_counted(qtbot, tiny_model, tmp_path):
    path, matrix = tiny_model
    state = AppState()
    jobs = NeighborsController(state, k=5, metric="l2", cache_dir=tmp_path / "cache")
    state.open(path)
    qtbot.waitUntil(lambda: state.model is not None and not state.jobs.busy, timeout=30000)
    model = state.model
    m = matrix.astype(np.float64)
    ranked = [int(i) for i in np.argsort(np.linalg.norm(m - m[4], axis=1), kind="stable")]
    ranked.remove(4)
    used = [i for i in ranked if not model.is_unused(i)][:5]
    assert len(used) == 5 and any(model.is_unused(i) for i in ranked[: ranked.index(used[-1])])
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        state.select([4])
    found = blocker.args[0]
    assert [int(i) for i in found.result.ids] == used
    assert found.hidden == ranked.index(used[-1]) + 1 - 5
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        jobs.set_options(hide_unused=False)
    assert [int(i) for i in blocker.args[0].result.ids] == ranked[:5]
    assert blocker.args[0].hidden == 0


def test_typed_expression_gets_neighbors_until_the_selection_changes(qtbot, tiny_model, tmp_path):
    path, matrix = tiny_model
    state = AppState()
    jobs = NeighborsController(state, k=3, cache_dir=tmp_path / "cache")
    jobs.hide_unused = False
    state.open(path)
    qtbot.waitUntil(lambda: state.model is not None and not state.jobs.busy, timeout=30000)
    tok = state.model.tokenizer
    cat, dog, kitten = (tok.find(w) for w in ("cat", "dog", "kitten"))
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        jobs.search_text("cat - dog + kitten")
    found = blocker.args[0]
    assert found.description == "cat - dog + kitten"
    m = matrix.astype(np.float64)
    q = m[cat] - m[dog] + m[kitten]
    scores = m @ q / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    left_out = {cat, dog, kitten, *tok.special_ids}  # special tokens answer no expression
    assert tok.special_ids
    expected = [int(i) for i in np.argsort(-scores, kind="stable") if i not in left_out]
    assert [int(i) for i in found.result.ids] == expected[:3]
    with qtbot.waitSignal(jobs.failed, timeout=30000) as blocker:
        jobs.search_text("cat - - dog")
    assert "two operators" in str(blocker.args[0])
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        state.select([4])
    assert blocker.args[0].description == state.model.label(4)


def test_child_killed_while_writing_leaves_no_half_written_index(tiny_model, tmp_path):
    import pytest

    from explorer.app.index_process import build_in_child
    from explorer.core.context import JobContext
    from explorer.core.errors import Cancelled
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher

    path, _ = tiny_model
    cache = tmp_path / "cache"
    searcher = NeighborSearcher(open_model(path), cache_dir=cache)
    seen = []

    def progress(_fraction: float, _text: str) -> None:
        seen.append(list(cache.rglob("tmp-*")))  # the child reports after making its folder
        ctx.cancel()  # kills it (SIGKILL: it cannot clean up itself)

    ctx = JobContext(progress=progress)
    with pytest.raises(Cancelled):
        build_in_child(searcher, ctx)
    assert seen and seen[0], "the child had started writing"
    assert not list(cache.rglob("tmp-*"))


def test_a_new_selection_stops_the_running_search_at_once(qtbot, tiny_model, tmp_path, monkeypatch):
    """An exact scan of a large matrix takes seconds: it must not run on through the clicks
    that follow, and the settle delay must not keep it alive either."""
    import threading

    from explorer.core.errors import Cancelled

    path, _ = tiny_model
    real_search = neighbors_core.NeighborSearcher.search
    started = threading.Event()
    checks = []  # the running search's cancel check

    def search(self, query, *args, ctx, **kwargs):
        if query.exclude != {4}:
            return real_search(self, query, *args, ctx=ctx, **kwargs)
        checks.append(ctx.cancelled)
        started.set()
        while not ctx.cancelled():  # a scan that only a cancel ends
            threading.Event().wait(0.005)
        raise Cancelled("search cancelled")

    monkeypatch.setattr(neighbors_core.NeighborSearcher, "search", search)
    state = AppState()
    jobs = NeighborsController(state, k=3, cache_dir=tmp_path / "cache")
    state.open(path)
    qtbot.waitUntil(lambda: state.model is not None and not state.jobs.busy, timeout=30000)
    state.select([4])
    qtbot.waitUntil(started.is_set, timeout=30000)
    state.select([7])
    assert checks[0](), "the search for the old selection still runs"
    assert jobs.pending, "the new search starts after the settle delay, as before"
    with qtbot.waitSignal(jobs.resultsReady, timeout=30000) as blocker:
        pass
    assert blocker.args[0].ids == (7,)


def test_the_index_child_runs_niced_from_its_first_line(tiny_model, tmp_path, monkeypatch):
    """Its interpreter start and imports come while the window opens the model."""
    import os
    import sys

    import pytest

    from explorer.app import index_process, tuning
    from explorer.core.context import JobContext
    from explorer.core.errors import ExplorerError
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher

    if sys.platform != "linux":
        pytest.skip("niceness per thread (Linux)")
    path, _ = tiny_model
    searcher = NeighborSearcher(open_model(path), cache_dir=tmp_path / "cache")
    report = (
        "import os; from explorer.app import child; "
        "child.write_message(child.reply_channel(), "
        "{'op': 'progress', 'fraction': os.getpriority(os.PRIO_PROCESS, 0)})"
    )
    monkeypatch.setattr(index_process, "child_command", lambda _s: [sys.executable, "-c", report])
    seen = []
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with pytest.raises(ExplorerError, match="cannot be read back"):  # it built nothing
        index_process.build_in_child(searcher, JobContext(progress=lambda n, _t: seen.append(n)))
    assert seen and seen[0] >= tuning.BACKGROUND_NICE
    assert os.getpriority(os.PRIO_PROCESS, 0) == mine  # the caller's thread is as it was
