"""The fast index on real rows: measured recall, widening, fallback, path choice.

Real data: a 2048-row slice of SmolLM2-135M's embedding (tests/data, Apache-2.0, see NOTICE)
and the demo model (all-MiniLM-L6-v2). References are numpy float64 brute force.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from explorer.core.model import cold_rows
from explorer.core.model.open import open_model
from explorer.core.search import neighbors
from explorer.core.search import tune as search_tune
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from tests.support.jobs import Recorder
from tests.support.memory import mappings_of
from tests.support.search import brute_force

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"


def recall(searcher, values, metric, ids, **kw) -> float:
    hits = 0
    for qid in ids:
        res = searcher.search(query_for_ids(searcher.model, [int(qid)]), k=10, metric=metric, **kw)
        hits += min(10, len(set(res.ids.tolist()) & brute_force(values, int(qid), metric)))
    return hits / (10 * len(ids))


@pytest.fixture
def tight_grid(monkeypatch):
    """Candidate lists far shorter than the slice, so that both stages really filter."""
    monkeypatch.setattr(search_tune, "MIN_C1", 40)
    monkeypatch.setattr(search_tune, "C1_FRACTIONS", (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4))
    monkeypatch.setattr(search_tune, "C2_STEPS", (10, 20, 40, 80, 160))


@pytest.fixture
def slice_model(tmp_path):
    path = tmp_path / "model.safetensors"
    shutil.copy(SLICE, path)
    return open_model(path, tokenizer=False)


def test_index_measures_and_reaches_its_recall_on_real_rows(slice_model, tmp_path, tight_grid):
    model = slice_model
    values = model.vectors(range(model.rows)).astype(np.float64)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    ctx = Recorder()
    searcher.build_fast_index(ctx)
    steps = ctx.fractions
    assert steps == sorted(steps) and steps[-1] == 1.0
    stats = searcher.index.stats
    assert stats.queries >= 200
    for metric in ("cosine", "dot"):
        assert stats.usable[metric] and stats.recall_at_10[metric] >= 0.99
        c1, c2 = stats.settings[metric]
        assert c1 < model.rows  # the index filtered: this is not an exact scan in disguise
        # New random rows, checked against float64 brute force, not against our exact path.
        ids = np.random.default_rng(11).choice(model.rows, 200, replace=False)
        assert recall(searcher, values, metric, ids, exact=False) >= 0.99
        res = searcher.search(query_for_ids(model, [int(ids[0])]), metric=metric, exact=False)
        assert res.path == "fast" and res.recall_at_10 == stats.recall_at_10[metric]
        assert "fast index · recall@10" in res.path_label
        ref = values[res.ids] @ values[int(ids[0])]
        if metric == "cosine":
            ref /= np.linalg.norm(values[res.ids], axis=1) * np.linalg.norm(values[int(ids[0])])
        np.testing.assert_allclose(res.scores, ref, rtol=1e-4, atol=1e-5)


def test_index_widens_when_the_cheapest_setting_misses(slice_model, tmp_path, tight_grid):
    searcher = NeighborSearcher(slice_model, cache_dir=tmp_path / "cache")
    searcher.build_fast_index()
    cheapest = (search_tune.MIN_C1, search_tune.C2_STEPS[0])
    settings = searcher.index.stats.settings
    assert any(tuple(settings[m]) != cheapest for m in settings)


def test_unusable_index_is_not_used_and_says_why(slice_model, tmp_path, monkeypatch):
    monkeypatch.setattr(search_tune, "MIN_C1", 12)
    monkeypatch.setattr(search_tune, "C1_FRACTIONS", (1 / 1000,))
    monkeypatch.setattr(search_tune, "C2_STEPS", (10,))
    model = slice_model
    values = model.vectors(range(model.rows)).astype(np.float64)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    searcher.build_fast_index()
    stats = searcher.index.stats
    assert not stats.usable["cosine"] and stats.recall_at_10["cosine"] < 0.99
    assert "cosine: recall@10" in stats.reason
    res = searcher.search(query_for_ids(model, [7]), metric="cosine", exact=False)
    assert res.path == "exact" and res.exact and "not used" in res.note
    assert set(res.ids.tolist()) <= brute_force(values, 7, "cosine")
    monkeypatch.setattr(neighbors, "CHEAP_EXACT_VALUES", 0)
    assert searcher.default_path("cosine") == "exact"


def test_small_matrix_answers_exactly_and_builds_nothing_unasked(tmp_path):
    from explorer.core.resources import demo_model_dir

    model = open_model(demo_model_dir(), tokenizer=False)
    cache = tmp_path / "cache"
    searcher = NeighborSearcher(model, cache_dir=cache)
    assert searcher.exact_is_cheap and not searcher.fast_ready
    for metric in ("cosine", "dot"):
        res = searcher.search(query_for_ids(model, [4937]), metric=metric)
        assert res.path == "exact" and res.exact and res.recall_at_10 is None
    assert searcher.index is None and not cache.exists()  # searching built nothing


def test_large_matrix_default_takes_the_index(slice_model, tmp_path, monkeypatch, tight_grid):
    monkeypatch.setattr(neighbors, "CHEAP_EXACT_VALUES", 0)  # as if the slice were large
    searcher = NeighborSearcher(slice_model, cache_dir=tmp_path / "cache")
    assert not searcher.fast_ready and searcher.default_path("cosine") == "exact"
    searcher.build_fast_index()
    assert searcher.fast_ready
    for metric in ("cosine", "dot"):
        assert searcher.default_path(metric) == "fast"
        assert searcher.search(query_for_ids(slice_model, [3]), metric=metric).path == "fast"
    assert searcher.search(query_for_ids(slice_model, [3]), metric="l2").path == "exact"
    again = NeighborSearcher(slice_model, cache_dir=tmp_path / "cache")
    assert again.load_cached_fast_index() and again.index.stats == searcher.index.stats


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps")
def test_fast_search_reranks_large_matrices_through_the_random_access_map(
    slice_model, tmp_path, monkeypatch, tight_grid
):
    """A fault in the model's map reads ahead around its page (8 MB on some disks): the
    re-rank's scattered rows come through the second map, which reads only what it touches."""
    monkeypatch.setattr(cold_rows, "RANDOM_ACCESS_BYTES", 0)  # as if the slice were large
    values = slice_model.vectors(range(slice_model.rows)).astype(np.float64)
    searcher = NeighborSearcher(slice_model, cache_dir=tmp_path / "cache")
    searcher.build_fast_index()
    path = Path(slice_model.matrix.filename).resolve()
    assert not [rss for flags, rss in mappings_of(path) if "rr" in flags]  # not made yet
    ids = np.random.default_rng(5).choice(slice_model.rows, 50, replace=False)
    assert recall(searcher, values, "cosine", ids, exact=False) >= 0.99
    touched = [rss for flags, rss in mappings_of(path) if "rr" in flags]
    assert len(touched) == 1 and touched[0] > 0


@pytest.mark.parametrize("dtype", ["F16", "F8_E4M3"])
def test_index_on_formats_the_kernels_do_not_read(tmp_path, dtype, tight_grid):
    """Non-BF16/F32 rows go through EmbeddingModel.decode_block / vectors (any format)."""
    from tests.support.models import NUMPY_DTYPES, write_arrays

    values = open_model(SLICE, tokenizer=False).vectors(range(2048))
    path = write_arrays(tmp_path / "m.safetensors", {"emb": values.astype(NUMPY_DTYPES[dtype])})
    model = open_model(path, tokenizer=False)
    stored = model.vectors(range(model.rows)).astype(np.float64)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    searcher.build_fast_index()
    assert searcher.index.stats.recall_at_10["cosine"] >= 0.99
    ids = np.random.default_rng(2).choice(model.rows, 50, replace=False)
    assert recall(searcher, stored, "cosine", ids, exact=False) >= 0.98


def test_demo_recall_against_float64_brute_force(tmp_path):
    """The demo model (30522 × 384, real): the index it builds when asked is right."""
    from explorer.core.resources import demo_model_dir

    model = open_model(demo_model_dir(), tokenizer=False)
    values = model.vectors(range(model.rows)).astype(np.float64)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    searcher.build_fast_index()
    ids = np.random.default_rng(3).choice(model.rows, 100, replace=False)
    for metric in ("cosine", "dot"):
        assert searcher.index.stats.recall_at_10[metric] >= 0.99
        assert recall(searcher, values, metric, ids, exact=False) >= 0.99


def test_build_removes_half_written_indexes_of_dead_builds_only(slice_model, tmp_path):
    import subprocess
    import sys

    from explorer.core.search import build as search_build
    from explorer.core.search import fast as search_fast

    cache = tmp_path / "cache"
    final = search_fast.folder_for(slice_model, cache)
    final.parent.mkdir(parents=True)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = search_build.partial_folder(final, int(gone.stdout))
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live_proc:
        live = search_build.partial_folder(final, live_proc.pid)
        other_model = final.parent / f"tmp-{gone.stdout.strip()}-0123abcd"
        for folder in (dead, live, other_model):
            folder.mkdir()
            (folder / "codes.npy").write_bytes(b"x" * 1000)
        NeighborSearcher(slice_model, cache_dir=cache).build_fast_index()
        live_proc.kill()
    assert not dead.exists()  # a killed build's leftovers
    assert live.exists() and other_model.exists()  # a build still running; another tensor's


def test_build_decodes_bf16_blocks_exactly_into_one_reused_buffer(slice_model):
    from explorer.core.search import build as search_build

    model = slice_model
    assert model.dtype == "BF16" and model.matrix.dtype.itemsize == 2
    decode = search_build.decoder(model)
    buf = np.full((64, model.dim), np.nan, np.float32)
    for start, stop in ((0, 64), (100, 130)):
        rows = decode(start, stop, buf)
        assert np.shares_memory(rows, buf) and rows.shape == (stop - start, model.dim)
        want = np.asarray(model.matrix[start:stop]).view(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(rows.view(np.uint32), want.view(np.uint32))  # bit-exact


@pytest.mark.parametrize("dtype", ["F16", "F32", "F8_E4M3"])
def test_build_decodes_other_float_blocks_exactly_into_the_buffer(tmp_path, dtype):
    from explorer.core.search import build as search_build
    from tests.support.models import NUMPY_DTYPES, write_arrays

    values = np.asarray(open_model(SLICE, tokenizer=False).vectors(range(64)), np.float32)
    path = tmp_path / "model.safetensors"
    write_arrays(path, {"model.embed_tokens.weight": values.astype(NUMPY_DTYPES[dtype])})
    model = open_model(path, tokenizer=False)
    buf = np.full((64, model.dim), np.nan, np.float32)
    rows = search_build.decoder(model)(8, 40, buf)
    assert np.shares_memory(rows, buf)
    want = model.decode_block(8, 40)
    np.testing.assert_array_equal(rows.view(np.uint32), want.view(np.uint32))


def test_mean_direction_reads_a_few_rows_at_a_time(tmp_path):
    """The build's centring direction, from 8192 sampled rows, is the unit mean of the unit rows
    (NaN and zero rows skipped), without the sample's temporaries: the whole sample at once
    was ~400 MB at 248320 x 4096, given back to the kernel as the build began."""
    import tracemalloc

    from explorer.core.search import build as search_build
    from tests.support.models import write_arrays

    rows = np.asarray(open_model(SLICE, tokenizer=False).vectors(range(2048)), np.float32)
    values = np.concatenate([rows] * 4)  # 8192 real rows, 576 wide: 18 MB as float32
    values[5], values[6] = np.nan, 0.0
    path = tmp_path / "model.safetensors"
    write_arrays(path, {"model.embed_tokens.weight": values})
    model = open_model(path, tokenizer=False)
    ids = np.arange(model.rows)

    norms = np.linalg.norm(values.astype(np.float64), axis=1)
    ok = np.isfinite(norms) & (norms > 0)
    want = (values[ok] / norms[ok, None]).mean(0)
    want /= np.linalg.norm(want)
    tracemalloc.start()
    try:
        got = search_build.mean_direction(model, ids, chunk=256)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.dtype == np.float32 and got.shape == (model.dim,)
    np.testing.assert_allclose(got, want, atol=1e-6)
    chunk_bytes = 256 * model.dim * 4
    assert peak < 8 * chunk_bytes < values.nbytes / 3  # a few chunks, never the whole sample
    np.testing.assert_array_equal(search_build.mean_direction(model, ids[5:7]), 0)


@pytest.mark.parametrize("dim", [50, 576, 4096, 16384])
def test_build_blocks_stay_under_the_childs_mmap_threshold(dim):
    """The build's block buffers (rows, and their dots with the queries) come from the heap of
    its child: malloc hands out blocks over its mmap threshold as fresh mappings, and gives
    them back to the kernel when freed."""
    from explorer.app.tuning import KEEP_FREED_MEMORY
    from explorer.core.search import build as search_build
    from explorer.core.search import tune as search_tune

    queries = 2 * (search_tune.CALIBRATE + search_build.MEASURE)
    rows = search_build.block_rows(dim, queries)
    threshold = int(KEEP_FREED_MEMORY["MALLOC_MMAP_THRESHOLD_"])
    assert rows * dim * 4 <= threshold and rows * queries * 4 <= threshold
