"""Neighbour search against a float64 brute-force reference, on tiny real safetensors files."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from explorer.core.context import JobContext
from explorer.core.errors import Cancelled, ExplorerError, TokenError
from explorer.core.model.open import open_model
from explorer.core.search import exact as search_exact
from explorer.core.search.fast import KIND
from explorer.core.search.neighbors import (
    METRICS,
    NeighborSearcher,
    query_for_expression,
    query_for_ids,
    query_for_text,
    query_for_vector,
)
from tests.support.jobs import Recorder
from tests.support.models import NUMPY_DTYPES
from tests.support.models import write_model as write_files
from tests.support.tokenizers import word_tokenizer

WORDS = [
    "[UNK]",
    "king",
    "queen",
    "man",
    "woman",
    "cat",
    "dog",
    "kitten",
    "banana",
    "apple",
    "ice",
    "cream",
    "a-b",
]


def write_model(
    folder: Path, matrix: np.ndarray, dtype: str = "F32", tokenizer: bool = True
) -> Path:
    """The embedding alone in `dtype`, with a tokenizer of WORDS split at whitespace only."""
    words = word_tokenizer(WORDS, specials=["[UNK]"], split_punctuation=False)
    stored = np.asarray(matrix).astype(NUMPY_DTYPES[dtype])
    write_files(folder, matrix=stored, tokenizer=words if tokenizer else None, layers=False)
    return folder


def clustered(rows: int, dim: int, clusters: int, seed: int = 0, noise: float = 0.35) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    return centres[rng.integers(0, clusters, rows)] + noise * rng.standard_normal((rows, dim))


def reference(values: np.ndarray, q: np.ndarray, metric: str) -> np.ndarray:
    """Brute-force float64 scores of every row (l2: distance)."""
    v = values.astype(np.float64)
    q = q.astype(np.float64)
    if metric == "dot":
        return v @ q
    if metric == "cosine":
        with np.errstate(invalid="ignore", divide="ignore"):  # zero rows → NaN, left out
            return (v @ q) / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))
    return np.linalg.norm(v - q, axis=1)


def check_exact(result, values, q, metric, k, exclude=()):
    ref = reference(values, q, metric)
    ref[list(exclude)] = np.nan
    order = np.argsort(ref) if metric == "l2" else np.argsort(-ref)
    order = order[np.isfinite(ref[order])]
    expected = ref[order[:k]]
    scale = np.abs(expected).max() + 1e-12
    assert len(result.ids) == len(expected)
    # The scores are the reference scores of the returned ids, and they are the best possible ones
    # (compared by value, so ties between equal rows cannot make the test flaky).
    np.testing.assert_allclose(result.scores, ref[result.ids], rtol=2e-4, atol=2e-5 * scale)
    np.testing.assert_allclose(result.scores, expected, rtol=2e-4, atol=2e-5 * scale)
    assert len(set(result.ids.tolist())) == len(result.ids)


@pytest.fixture
def small_blocks(monkeypatch):
    """Tiny scan blocks so that the block loop, not one call, is what gets tested."""
    monkeypatch.setattr(search_exact, "BLOCK_BYTES", 2048)


@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16", "F64", "F8_E4M3", "F8_E5M2"])
def test_exact_matches_float64_reference(tmp_path, dtype, small_blocks):
    values = np.random.default_rng(1).standard_normal((700, 37)) * 0.8
    model = open_model(write_model(tmp_path / "m", values, dtype), tokenizer=False)
    decoded = model.vectors(range(model.rows)).astype(np.float64)  # the stored values, exactly
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    queries = [
        query_for_ids(model, [3]),
        query_for_ids(model, [10, 20, 30]),
        query_for_vector(np.linspace(-1, 1, 37)),
    ]
    for metric in METRICS:
        batch = searcher.search_many(queries, k=25, metric=metric)
        for q, res in zip(queries, batch, strict=True):
            assert res.exact and res.metric == metric and res.skipped == 0
            check_exact(res, decoded, q.vector, metric, 25, exclude=q.exclude)
            single = searcher.search(q, k=25, metric=metric)
            np.testing.assert_array_equal(single.ids, res.ids)


def test_query_row_comes_first_when_included(tmp_path):
    values = np.random.default_rng(2).standard_normal((100, 16))
    model = open_model(write_model(tmp_path / "m", values), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    q = query_for_ids(model, [42])
    assert 42 not in searcher.search(q, k=99).ids
    res = searcher.search(q, k=5, include_query=True)
    assert res.ids[0] == 42 and res.scores[0] == pytest.approx(1.0, abs=1e-6)
    res = searcher.search(q, k=5, metric="l2", include_query=True)
    assert res.ids[0] == 42 and res.scores[0] == pytest.approx(0.0, abs=1e-3)
    assert np.all(np.diff(res.scores) >= 0)  # distances ascend


@pytest.mark.parametrize("dtype", ["F32", "BF16", "F16"])
def test_zero_and_nonfinite_rows_are_skipped_and_counted(tmp_path, dtype):
    values = np.random.default_rng(3).standard_normal((60, 8))
    values[5] = 0
    values[7, 3] = np.nan
    values[9, 0] = np.inf
    values[11, 1] = -np.inf
    model = open_model(write_model(tmp_path / "m", values, dtype), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    bad = {5, 7, 9, 11}
    for metric in METRICS:
        res = searcher.search(query_for_ids(model, [0]), k=1000, metric=metric)
        assert res.skipped == 4
        assert not bad & set(res.ids.tolist())
        assert len(res.ids) == 60 - 4 - 1  # k larger than the vocabulary: every usable row once
        assert np.isfinite(res.scores).all()
        decoded = model.vectors(range(60)).astype(np.float64)
        decoded[sorted(bad)] = np.nan
        check_exact(res, decoded, model.vector(0), metric, 1000, exclude={0})


def test_k_larger_than_vocabulary(tmp_path):
    values = np.random.default_rng(4).standard_normal((13, 6))
    model = open_model(write_model(tmp_path / "m", values), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    res = searcher.search(query_for_ids(model, [2]), k=1000)
    assert sorted(res.ids.tolist()) == [i for i in range(13) if i != 2]
    assert np.all(np.diff(res.scores) <= 0)


def test_bad_arguments(tmp_path):
    values = np.random.default_rng(5).standard_normal((20, 6))
    model = open_model(write_model(tmp_path / "m", values), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    q = query_for_ids(model, [1])
    with pytest.raises(ExplorerError, match="unknown metric"):
        searcher.search(q, metric="manhattan")
    with pytest.raises(ExplorerError, match="k must be"):
        searcher.search(q, k=0)
    with pytest.raises(ExplorerError, match="6"):
        searcher.search(query_for_vector(np.ones(5)))
    with pytest.raises(ExplorerError, match="zero vector"):
        searcher.search(query_for_vector(np.zeros(6)))
    with pytest.raises(ExplorerError, match="NaN"):
        searcher.search(query_for_vector([1, 2, np.nan, 0, 0, 0]))
    with pytest.raises(TokenError, match="out of range"):
        query_for_ids(model, [20])
    with pytest.raises(TokenError, match="no tokenizer"):
        query_for_text(model, "cat")
    assert len(searcher.search(query_for_vector(np.zeros(6)), k=3, metric="l2")) == 3


# -- queries and expressions ---------------------------------------------------------------------


@pytest.fixture
def word_model(tmp_path):
    values = np.random.default_rng(6).standard_normal((len(WORDS) + 3, 10))  # 3 unused rows
    return open_model(write_model(tmp_path / "words", values))


def test_expression_arithmetic(word_model):
    m = word_model
    v = {w: m.vector(i).astype(np.float64) for i, w in enumerate(WORDS)}
    q = query_for_expression(m, "king - man + woman")
    np.testing.assert_allclose(q.vector, v["king"] - v["man"] + v["woman"], rtol=1e-6, atol=1e-6)
    assert q.exclude == {1, 3, 4}
    assert q.description == "king - man + woman"
    q = query_for_expression(m, "king-man+woman")
    np.testing.assert_allclose(q.vector, v["king"] - v["man"] + v["woman"], rtol=1e-6, atol=1e-6)
    q = query_for_expression(m, "-cat + #6")
    np.testing.assert_allclose(q.vector, v["dog"] - v["cat"], rtol=1e-6, atol=1e-6)
    assert q.exclude == {5, 6}
    # A quoted term may hold + and -; a term of several tokens is their mean.
    q = query_for_expression(m, "'a-b' + \"ice cream\"")
    expected = v["a-b"] + (v["ice"] + v["cream"]) / 2
    np.testing.assert_allclose(q.vector, expected, rtol=1e-6, atol=1e-6)
    assert q.exclude == {12, 10, 11}
    q = query_for_expression(m, "ice cream - apple")
    expected = (v["ice"] + v["cream"]) / 2 - v["apple"]
    np.testing.assert_allclose(q.vector, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "expr, message",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("king +", "ends with an operator"),
        ("king + - man", "two operators"),
        ("- - king", "two operators"),
        ("king 'man'", "missing \\+ or -"),
        ("king + 'man", "unclosed quote"),
        ("king + ''", "empty term"),
        ("king + #999", "out of range"),
        ("king - zebra", "not in the vocabulary"),
    ],
)
def test_bad_expressions(word_model, expr, message):
    with pytest.raises(TokenError, match=message):
        query_for_expression(word_model, expr)


def test_text_and_id_queries(word_model):
    m = word_model
    q = query_for_text(m, "ice cream")
    np.testing.assert_allclose(q.vector, (m.vector(10) + m.vector(11)) / 2, rtol=1e-6)
    assert q.exclude == {10, 11} and "ice cream" in q.description
    assert query_for_ids(m, [5]).description == "cat"
    assert query_for_ids(m, [5, 6, 7]).description == "mean of 3 tokens"
    with pytest.raises(TokenError):
        query_for_text(m, "")


def test_a_long_selection_reads_each_row_once(tmp_path):
    """The mean over 40k tokens of a few ids: their rows weighted by their counts, with no row
    made per token (those took 1.3 GB for a 40k-token paste on the 4096-wide model)."""
    import tracemalloc

    m = open_model(
        write_model(tmp_path / "wide", np.random.default_rng(6).standard_normal((20, 64)))
    )
    ids = np.random.default_rng(2).choice([5, 6, 10, 11], 40_000).tolist()
    reference = m.vectors(ids).astype(np.float64).mean(axis=0)  # a row per token
    tracemalloc.start()
    try:
        q = query_for_ids(m, ids)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(q.vector, reference, rtol=1e-6, atol=1e-7)
    assert q.exclude == {5, 6, 10, 11} and q.description == "mean of 40000 tokens"
    assert peak < 40_000 * m.dim * 8 / 4  # a float64 row per token: 20 MB here


# -- fast index ----------------------------------------------------------------------------------


def test_fast_index_recall_and_exact_scores(tmp_path):
    values = clustered(3000, 48, clusters=60, seed=7)
    values[-5:] = 0  # padding rows
    model = open_model(write_model(tmp_path / "m", values, "BF16"), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    ctx = Recorder()
    searcher.build_fast_index(ctx)
    steps = ctx.fractions
    assert steps[-1] == 1.0 and steps == sorted(steps) and searcher.index is not None
    rng = np.random.default_rng(0)
    for metric in ("cosine", "dot"):
        hits = 0
        for qid in rng.choice(2995, 100, replace=False):
            q = query_for_ids(model, [int(qid)])
            fast = searcher.search(q, k=10, metric=metric, exact=False)
            exact = searcher.search(q, k=10, metric=metric, exact=True)
            assert not fast.exact and exact.exact and fast.skipped == 5
            hits += len(set(fast.ids.tolist()) & set(exact.ids.tolist()))
            # Re-ranked scores are exact scores of the returned rows.
            ref = reference(model.vectors(fast.ids), q.vector, metric)
            np.testing.assert_allclose(fast.scores, ref, rtol=1e-4, atol=1e-4)
        assert hits / 1000 >= 0.99, metric
    # Euclidean distance is always served by the exact scan, even when fast is asked for.
    assert searcher.search(query_for_ids(model, [0]), metric="l2", exact=False).exact


def test_fast_index_is_cached_and_invalidated_when_the_file_changes(tmp_path):
    folder = write_model(tmp_path / "m", clustered(500, 16, 10, seed=1), "F32", tokenizer=False)
    cache = tmp_path / "cache"
    first = NeighborSearcher(open_model(folder, tokenizer=False), cache_dir=cache)
    first.load_cached_fast_index()
    assert first.index is None
    built = Recorder()
    first.build_fast_index(built)
    assert built.fractions[-1] == 1.0
    entries = [p for p in (cache / KIND).iterdir() if p.is_dir()]
    assert len(entries) == 1

    # Next launch: loaded from disk, not rebuilt (one step).
    again = NeighborSearcher(open_model(folder, tokenizer=False), cache_dir=cache)
    assert again.load_cached_fast_index() and again.index is not None and again.skipped == 0
    reloaded = NeighborSearcher(open_model(folder, tokenizer=False), cache_dir=cache)
    loaded = Recorder()
    reloaded.build_fast_index(loaded)
    assert loaded.fractions == [1.0]

    # Same size, new values and mtime: the old index must not be used.
    new_values = clustered(500, 16, 10, seed=2)
    new_values[3] = 0
    write_model(folder, new_values, "F32", tokenizer=False)
    st = (folder / "model.safetensors").stat()
    os.utime(folder / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    changed = NeighborSearcher(open_model(folder, tokenizer=False), cache_dir=cache)
    changed.load_cached_fast_index()
    assert changed.index is None
    rebuilt = Recorder()
    changed.build_fast_index(rebuilt)
    assert len(rebuilt.fractions) > 1  # rebuilt
    assert changed.index is not None and changed.skipped == 1
    res = changed.search(query_for_ids(changed.model, [0]), k=5, exact=False)
    check_exact(res, new_values, new_values[0], "cosine", 5, exclude={0, 3})
    entries = [p for p in (cache / KIND).iterdir() if p.is_dir()]
    assert len(entries) == 1  # the stale entry was removed


# -- cancellation --------------------------------------------------------------------------------


def test_cancel_running_exact_search(tmp_path, small_blocks):
    values = clustered(2000, 64, 10)
    model = open_model(write_model(tmp_path / "m", values, "BF16"), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    ctx = Recorder(cancel_after=3)  # cancelled part-way through the scan

    with pytest.raises(Cancelled):
        searcher.search(query_for_ids(model, [0]), ctx=ctx)
    assert len(ctx.fractions) == 3 and ctx.fractions[-1] < 1
    assert len(searcher.search(query_for_ids(model, [0]), k=3)) == 3  # still usable


def test_cancel_search_from_another_thread(tmp_path, small_blocks):
    values = clustered(4000, 64, 10)
    model = open_model(write_model(tmp_path / "m", values, "BF16"), tokenizer=False)
    searcher = NeighborSearcher(model, cache_dir=tmp_path / "cache")
    started = threading.Event()
    outcome: list[object] = []
    ctx = JobContext(progress=lambda f, t: (started.set(), ctx.wait(30)))  # the scan waits

    def work() -> None:
        try:
            outcome.append(searcher.search(query_for_ids(model, [0]), ctx=ctx))
        except Cancelled as e:
            outcome.append(e)

    t = threading.Thread(target=work)
    t.start()
    assert started.wait(30)
    ctx.cancel()  # as the GUI side does
    t.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)


def test_cancel_index_build_leaves_no_cache(tmp_path):
    values = clustered(3000, 32, 10)
    model = open_model(write_model(tmp_path / "m", values, "BF16"), tokenizer=False)
    cache = tmp_path / "cache"
    searcher = NeighborSearcher(model, cache_dir=cache)
    with pytest.raises(Cancelled):
        searcher.build_fast_index(Recorder(cancel_after=3))
    assert searcher.index is None
    kind = cache / KIND
    assert not kind.exists() or list(kind.iterdir()) == []
    again = NeighborSearcher(model, cache_dir=cache)
    again.load_cached_fast_index()
    assert again.index is None
