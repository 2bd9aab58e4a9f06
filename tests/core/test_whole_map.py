"""The whole-vocabulary map on real rows (2,048 rows of SmolLM2's embedding): the first picture
and the layout, the cache, cancelling, hidden rows, and neighbour preservation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from explorer.core.errors import Cancelled
from explorer.core.map import faithful, whole
from explorer.core.map.projection import prepare
from explorer.core.model.open import open_model
from tests.support.jobs import Recorder
from tests.support.models import planted_model

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
FAST = whole.WholeParams(n_neighbors=8, n_epochs=30, seed=1)


@pytest.fixture(scope="module")
def smollm2():
    model = open_model(SLICE, tokenizer=False)
    yield model
    model.close()


def test_every_row_gets_finite_coordinates_after_a_pca_first_picture(smollm2, tmp_path):
    ctx = Recorder()
    result = whole.whole_map(smollm2, FAST, ctx, cache_dir=tmp_path)
    assert result.final and result.stage == "umap" and not result.cached
    assert result.coords.shape == (smollm2.rows, 2) and result.coords.dtype == np.float32
    assert np.isfinite(result.coords).all()
    assert result.coords.std(axis=0).min() > 0  # a spread picture, not a point
    [first] = ctx.partials
    assert isinstance(first, whole.WholeMap) and first.stage == "pca" and not first.final
    # the first picture is PCA of the unit rows: its first axis has the largest spread
    x = prepare(smollm2.vectors(np.arange(smollm2.rows)))
    top = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)[:2] ** 2 / len(x)
    assert np.allclose(first.coords.var(axis=0), top, rtol=0.05)
    assert ctx.fractions == sorted(ctx.fractions)


def test_the_layout_is_cached_and_a_damaged_cache_is_rebuilt(smollm2, tmp_path):
    first = whole.whole_map(smollm2, FAST, cache_dir=tmp_path)
    ctx = Recorder()
    again = whole.whole_map(smollm2, FAST, ctx, cache_dir=tmp_path)
    assert again.cached and not ctx.partials
    assert np.array_equal(again.coords, first.coords)
    other_params = whole.WholeParams(n_neighbors=9, n_epochs=5)
    other = whole.whole_map(smollm2, other_params, cache_dir=tmp_path)
    assert not other.cached  # other parameters: another entry
    path = whole.cache_file(smollm2, FAST, tmp_path)
    for damaged in (
        np.where(np.arange(len(first.coords))[:, None] == 3, np.nan, first.coords),  # NaN
        first.coords[:-1],  # a row short
        first.coords.astype(np.float64),  # another dtype
    ):
        np.save(path, damaged)
        assert whole.load_cached(smollm2, FAST, tmp_path) is None
    rebuilt = whole.whole_map(smollm2, FAST, cache_dir=tmp_path)
    assert not rebuilt.cached and whole.load_cached(smollm2, FAST, tmp_path) is not None


class CancelAtFirstPicture(Recorder):
    """The user cancels as soon as the first picture shows."""

    def partial(self, value: object) -> None:
        super().partial(value)
        self.cancel()


def test_cancel_during_the_layout_stops_it_and_caches_nothing(smollm2, tmp_path):
    ctx = CancelAtFirstPicture()
    with pytest.raises(Cancelled):
        whole.whole_map(smollm2, FAST, ctx, cache_dir=tmp_path)
    assert len(ctx.partials) == 1
    assert whole.load_cached(smollm2, FAST, tmp_path) is None


def test_wide_rows_are_reduced_for_the_graph_and_still_find_neighbours(smollm2, monkeypatch):
    monkeypatch.setattr(whole, "KNN_BYTES", 1 << 20)
    monkeypatch.setattr(whole, "REDUCED_DIMS", 64)
    x = whole.knn_vectors(smollm2, FAST)
    assert x.shape == (smollm2.rows, 64)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-4)
    ids, _ = whole.knn_graph(x, 6, seed=0)
    exact = faithful.exact_neighbors(smollm2, np.arange(0, smollm2.rows, 16), 5)
    found = ids[::16, 1:6]
    assert faithful.preservation(exact, found) > 0.3  # real near-duplicate families survive


def test_rows_beyond_the_tokenizer_and_special_tokens_are_flagged(tmp_path):
    folder, _, _ = planted_model(tmp_path / "m")
    model = open_model(folder)
    try:
        hidden = whole.hidden_rows(model)
        vocab = Tokenizer.from_file(str(folder / "tok-src.json")).get_vocab_size(True)
        assert hidden[vocab:].all()  # the padding rows
        special = sorted(model.tokenizer.special_ids)
        assert hidden[special].all()
        assert hidden.sum() == model.rows - vocab + len(special)
    finally:
        model.close()


def test_placeholder_pieces_are_hidden_like_special_tokens():
    from explorer.core.resources import demo_model_dir

    model = open_model(demo_model_dir())
    try:
        hidden = whole.hidden_rows(model)
        pieces = model.tokenizer.pieces
        placeholders = [i for i, p in enumerate(pieces) if p.startswith("[unused")]
        assert len(placeholders) > 900 and hidden[placeholders].all()  # BERT's [unused0]...
        assert not hidden[[pieces.index(w) for w in ("cat", "the", "##ing", "1812")]].any()
    finally:
        model.close()


def test_exact_neighbours_match_a_brute_force_scan(smollm2):
    ids = np.array([0, 5, 700, 2047])
    got = faithful.exact_neighbors(smollm2, ids, 10)
    x = prepare(smollm2.vectors(np.arange(smollm2.rows))).astype(np.float64)
    sims = x[ids] @ x.T
    sims[np.arange(len(ids)), ids] = -np.inf
    for row, want in zip(got, sims, strict=True):
        assert set(row) == set(np.argsort(-want)[:10])


def test_preservation_counts_shared_neighbours_on_the_map():
    coords = np.array([[0, 0], [1, 0], [2, 0], [10, 0], [11, 0]], dtype=np.float32)
    on_map = faithful.map_neighbors(coords, np.array([0, 3]), 2)
    assert [set(r) for r in on_map] == [{1, 2}, {4, 2}]
    exact = np.array([[1, 4], [4, 2]])
    assert faithful.preservation(exact, on_map) == pytest.approx(3 / 4)


class CancelAtIteration(Recorder):
    """The user cancels while NN-descent runs its second iteration."""

    def progress(self, fraction: float, text: str = "") -> None:
        super().progress(fraction, text)
        if "iteration 2" in text:
            self.cancel()


def test_nn_descent_finds_the_neighbours_reports_each_iteration_and_stops_on_cancel(smollm2):
    from explorer.core.map import descent

    x = prepare(smollm2.vectors(np.arange(smollm2.rows)))
    ctx = Recorder()
    ids, dists = descent.knn_descent(x, 10, seed=0, ctx=ctx)
    assert ids.shape == dists.shape == (smollm2.rows, 10)
    assert (ids[:, 0] == np.arange(smollm2.rows)).all() and (dists[:, 0] == 0).all()
    assert (np.diff(dists, axis=1) >= -1e-6).all()  # nearest first
    sims = x @ x.T
    assert np.allclose(1 - np.take_along_axis(sims, ids[:, 1:], 1), dists[:, 1:], atol=1e-4)
    np.fill_diagonal(sims, -np.inf)
    exact = np.argsort(-sims, axis=1)[:, :9]
    assert faithful.preservation(exact, ids[:, 1:]) > 0.75  # NN-descent with few neighbours
    assert any("iteration 1" in t for t in ctx.texts) and ctx.fractions[-1] == 1.0
    assert ctx.fractions == sorted(ctx.fractions)

    stopper = CancelAtIteration()
    with pytest.raises(Cancelled):
        descent.knn_descent(x, 10, seed=0, ctx=stopper)
    assert not any("iteration 3" in t for t in stopper.texts)


def test_nn_descent_is_the_same_on_one_thread_or_two(smollm2, monkeypatch):
    import numba

    from explorer.core.map import descent

    # the forest's upper levels split by the rows' random projection here, as on big matrices
    monkeypatch.setattr(descent, "CACHED_BYTES", 1 << 16)
    x = prepare(smollm2.vectors(np.arange(smollm2.rows)))
    assert descent._sketch(x, np.random.default_rng(0))[1] < len(x)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = descent.knn_descent(x, 10, seed=3)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        every = descent.knn_descent(x, 10, seed=3)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one[0], every[0]) and np.array_equal(one[1], every[1])
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    exact = np.argsort(-sims, axis=1)[:, :9]
    assert faithful.preservation(exact, one[0][:, 1:]) > 0.75


def test_nn_descent_handles_rows_repeated_many_times(smollm2):
    """Copies defeat the random-projection split (every copy on one side): the forest halves
    such nodes instead, and each copy finds its twins at distance 0."""
    from explorer.core.map import descent

    base = prepare(smollm2.vectors(np.arange(1000, 1040)))
    assert len(np.unique(base, axis=0)) == 40
    x = np.ascontiguousarray(np.repeat(base, 50, axis=0))  # 40 rows, 50 copies each
    ids, dists = descent.knn_descent(x, 8, seed=0)
    assert (ids >= 0).all() and np.isfinite(dists).all()
    assert (ids // 50 == (np.arange(len(x)) // 50)[:, None]).all()
    assert np.allclose(dists, 0.0, atol=1e-5)
