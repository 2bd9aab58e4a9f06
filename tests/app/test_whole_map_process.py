"""The whole-vocabulary map laid out in a child process (explorer/app/whole_map_process.py), on
2,048 real rows of SmolLM2's embedding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.app import child, whole_map_process
from explorer.core.context import JobContext
from explorer.core.errors import Cancelled, ExplorerError
from explorer.core.map import whole
from explorer.core.model.open import open_model
from tests.support.jobs import Recorder

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
FAST = whole.WholeParams(n_neighbors=8, n_epochs=30, seed=1)


@pytest.fixture
def smollm2():
    model = open_model(SLICE, tokenizer=False)
    yield model
    model.close()


def test_the_child_sends_the_first_picture_then_the_layout_it_caches(
    smollm2, tmp_path, monkeypatch
):
    ctx = Recorder()
    result = whole_map_process.whole_map_in_child(smollm2, FAST, ctx, cache_dir=tmp_path)
    here = whole.whole_map(smollm2, FAST, cache_dir=tmp_path / "here")
    assert result.final and result.stage == "umap" and not result.cached
    assert np.allclose(result.coords, here.coords, atol=1e-4)  # the same computation
    [first] = ctx.partials
    assert isinstance(first, whole.WholeMap) and first.stage == "pca"
    assert np.allclose(first.coords, whole.first_picture(smollm2, FAST), atol=1e-5)
    assert any("UMAP epoch" in t for t in ctx.texts)
    assert set(result.seconds) >= {"first_picture", "graph", "layout"}

    def no_child(*_args, **_kwargs):
        raise AssertionError("a cached layout needs no child")

    monkeypatch.setattr(whole_map_process, "Child", no_child)
    again = whole_map_process.whole_map_in_child(smollm2, FAST, cache_dir=tmp_path)
    assert again.cached and np.array_equal(again.coords, result.coords)


def test_cancel_kills_the_child_at_once_and_caches_nothing(smollm2, tmp_path, monkeypatch):
    ctx = JobContext()
    started = []

    class CancelledOnceStarted(child.Child):
        def _start(self):
            proc = super()._start()
            started.append(proc)
            ctx.cancel()
            return proc

    monkeypatch.setattr(whole_map_process, "Child", CancelledOnceStarted)
    with pytest.raises(Cancelled):
        whole_map_process.whole_map_in_child(smollm2, FAST, ctx, cache_dir=tmp_path)
    assert len(started) == 1 and started[0].poll() is not None
    assert whole.load_cached(smollm2, FAST, tmp_path) is None


def test_a_failing_child_is_one_clear_error(smollm2, tmp_path, monkeypatch):
    failing = ["python3", "-c", "import sys; sys.exit('no map here')"]
    monkeypatch.setattr(whole_map_process, "child_command", lambda *_a: failing)
    with pytest.raises(ExplorerError, match="could not lay out the whole vocabulary: no map here"):
        whole_map_process.whole_map_in_child(smollm2, FAST, cache_dir=tmp_path)
