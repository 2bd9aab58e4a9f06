"""The random twin as a model: every reader (neighbours, the map's scan, statistics, values)
sees the twin's rows, and nothing cached for the real matrix is served for its twin."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.analysis.stats import compute_stats
from explorer.core.learning.twin import RandomTwin
from explorer.core.learning.twin_model import TwinEmbedding, twin_model
from explorer.core.map.neighborhood import cosine_to_all
from explorer.core.model.open import open_model
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from tests.support.models import write_model


@pytest.fixture()
def real(tmp_path):
    """300 rows with structure: ten clusters, so the real neighbours are not noise."""
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((10, 16)) * 3
    matrix = (centres[np.arange(300) % 10] + 0.3 * rng.standard_normal((300, 16))).astype(
        np.float32
    )
    write_model(tmp_path / "m", matrix=matrix, config={"vocab_size": 300})
    return open_model(tmp_path / "m"), matrix


def cosine_top(rows: np.ndarray, q: int, k: int) -> list[int]:
    x = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = x @ x[q]
    sims[q] = -np.inf
    return np.argsort(-sims, kind="stable")[:k].tolist()


def test_the_twin_model_reads_the_twin_rows_with_the_real_shape_and_labels(real, tmp_path):
    model, matrix = real
    twin = twin_model(model, seed=2, cache_dir=tmp_path / "cache")
    assert isinstance(twin, TwinEmbedding) and twin.real is model
    assert (twin.rows, twin.dim, twin.path) == (model.rows, model.dim, model.path)
    assert twin.label(5) == model.label(5) and "random twin" in twin.format
    expected = RandomTwin.of(model, seed=2).vectors([0, 7, 299])
    np.testing.assert_array_equal(twin.vectors([0, 7, 299]), expected)
    np.testing.assert_array_equal(twin.raw_rows([7]), expected[1:2])
    np.testing.assert_array_equal(twin.decode_block(0, 300)[[0, 7, 299]], expected)
    assert not np.allclose(twin.vectors([7]), matrix[7])
    assert twin.decode_output_block(0, 4) is None
    assert twin.matrix.shape == (300, 16) and twin.matrix.strides == (0, 0)  # holds no rows
    # the twin of a twin is the real model's twin again, not noise of noise
    again = twin_model(twin, seed=2, cache_dir=tmp_path / "cache")
    assert again.real is model and again.files == twin.files
    assert twin_model(model, seed=3, cache_dir=tmp_path / "cache").files != twin.files


def test_neighbors_and_the_map_scan_search_the_twin(real, tmp_path):
    model, matrix = real
    twin = twin_model(model, cache_dir=tmp_path / "cache")
    rows = twin.decode_block(0, twin.rows)
    for m, values in ((model, matrix), (twin, rows)):
        searcher = NeighborSearcher(m, cache_dir=tmp_path / "cache")
        found = searcher.search(query_for_ids(m, [4]), k=5)
        assert found.ids.tolist() == cosine_top(values, 4, 5)
        sims = cosine_to_all(m, m.vectors([4]))[0]
        x = values / np.linalg.norm(values, axis=1, keepdims=True)
        np.testing.assert_allclose(sims, x @ x[4], atol=1e-5)
    real_nb = NeighborSearcher(model).search(query_for_ids(model, [4]), k=5).ids
    assert set(real_nb.tolist()) <= set(range(4, 300, 10))  # the real row's own cluster
    twin_nb = NeighborSearcher(twin).search(query_for_ids(twin, [4]), k=5).ids
    assert len(set(twin_nb.tolist()) & set(range(4, 300, 10))) <= 2  # noise, not the cluster


def test_statistics_of_the_twin_are_its_own_and_never_the_real_cache(real, tmp_path):
    model, matrix = real
    cache = tmp_path / "cache"
    first = compute_stats(model, cache_dir=cache)
    twin = twin_model(model, cache_dir=cache)
    stats = compute_stats(twin, cache_dir=cache)
    assert not stats.cached  # the real matrix's cached pass was not served
    rows = twin.decode_block(0, twin.rows).astype(np.float64)
    np.testing.assert_allclose(stats.norms, np.linalg.norm(rows, axis=1), rtol=1e-5)
    np.testing.assert_allclose(first.norms, np.linalg.norm(matrix, axis=1), rtol=1e-5)
    np.testing.assert_allclose(stats.dim_mean, rows.mean(axis=0), atol=1e-6)
    assert compute_stats(twin, cache_dir=cache).cached  # the twin's own pass is cached
    assert compute_stats(model, cache_dir=cache).cached


def test_a_twin_keeps_the_real_models_tokenizer(tmp_path):
    write_model(tmp_path / "m", rows=400, dim=3, tokenizer="wordpiece")
    model = open_model(tmp_path / "m")
    twin = twin_model(model, cache_dir=tmp_path / "cache")
    assert twin.tokenizer is model.tokenizer
    assert twin.tokenizer is not None and twin.label(100) == model.label(100)
    assert twin.info()["rows"] == 400 and twin.info()["dtype"] == "F32"
