"""A token's exact neighbours on a map and the share the map keeps close (core/map/kept.py), on
real rows (2,048 of SmolLM2's) against a plain numpy reference: full sorts of cosines in the
original space and of distances on the map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explorer.core.map import kept
from explorer.core.map.projection import pca_2d, prepare
from explorer.core.model.open import open_model
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"


@pytest.fixture(scope="module")
def smollm2():
    model = open_model(SLICE, tokenizer=False)
    yield model
    model.close()


def reference(vectors: np.ndarray, coords: np.ndarray, row: int, k: int = 10):
    """(map rows of the exact top-k by cosine, how many of them are among the k nearest map
    points), by sorting everything."""
    x = vectors.astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    sims = x @ x[row]
    sims[row] = -np.inf
    exact = np.argsort(-sims, kind="stable")[:k]
    d = np.linalg.norm(coords.astype(np.float64) - coords[row], axis=1)
    d[row] = np.inf
    near = np.argsort(d, kind="stable")[:k]
    return exact, len(set(exact.tolist()) & set(near.tolist()))


def a_map(model, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vectors = model.vectors(ids)
    return vectors, pca_2d(prepare(vectors), 0)


def test_the_kept_share_is_what_sorting_everything_gives(smollm2):
    rng = np.random.default_rng(1)
    ids = np.sort(rng.choice(smollm2.rows, 600, replace=False))
    vectors, coords = a_map(smollm2, ids)
    shares = []
    for row in rng.choice(len(ids), 25, replace=False):
        found = kept.kept_neighbours(ids, coords, int(ids[row]), vectors=vectors)
        assert found is not None and found.row == row
        exact, n_kept = reference(vectors, coords, row)
        np.testing.assert_array_equal(found.rows, exact)
        np.testing.assert_array_equal(found.ids, ids[exact])
        assert found.n_kept == n_kept and found.share == n_kept / 10
        shares.append(found.share)
    assert 0 < np.mean(shares) < 1  # PCA to 2-D keeps some neighbours and loses others


def test_a_scan_of_the_whole_matrix_finds_the_neighbours_among_the_maps_points(smollm2):
    """The whole vocabulary, some rows left off the map: here the token's 100 nearest rows,
    so that the first scan's candidates are all off the map and the wider second scan must
    answer."""
    token = 700
    searcher = NeighborSearcher(smollm2)
    nearest = searcher.search(query_for_ids(smollm2, [token]), k=100, exact=True).ids
    ids = np.setdiff1d(np.arange(smollm2.rows), nearest)[::-1].copy()  # any order
    vectors, coords = a_map(smollm2, ids)
    found = kept.kept_neighbours(ids, coords, token, searcher=searcher)
    assert found is not None
    row = int(np.flatnonzero(ids == token)[0])
    exact, n_kept = reference(vectors, coords, row)
    np.testing.assert_array_equal(found.ids, ids[exact])
    assert not set(found.ids.tolist()) & set(nearest.tolist())
    assert found.n_kept == n_kept


def test_a_ranking_at_hand_serves_when_it_holds_enough_of_the_maps_points(smollm2):
    rng = np.random.default_rng(2)
    ids = np.sort(rng.choice(smollm2.rows, 1500, replace=False))
    vectors, coords = a_map(smollm2, ids)
    token = int(ids[10])
    ranked = NeighborSearcher(smollm2).search(query_for_ids(smollm2, [token]), k=50).ids
    from_ranking = kept.kept_neighbours(ids, coords, token, ranked=ranked)
    from_rows = kept.kept_neighbours(ids, coords, token, vectors=vectors)
    assert from_ranking is not None and from_rows is not None
    np.testing.assert_array_equal(from_ranking.rows, from_rows.rows)
    # a ranking with fewer than 10 of the map's points is not enough: the rows answer
    short = kept.kept_neighbours(ids, coords, token, vectors=vectors, ranked=ranked[:5])
    assert short is not None
    np.testing.assert_array_equal(short.rows, from_rows.rows)
    with pytest.raises(ValueError):
        kept.kept_neighbours(ids, coords, token, ranked=ranked[:5])


def test_a_token_off_the_map_and_tiny_maps(smollm2):
    ids = np.arange(4, dtype=np.int64)
    vectors, coords = a_map(smollm2, ids)
    assert kept.kept_neighbours(ids, coords, 99, vectors=vectors) is None
    found = kept.kept_neighbours(ids, coords, 2, vectors=vectors)
    assert found is not None and sorted(found.ids.tolist()) == [0, 1, 3]
    assert found.n_kept == 3  # every other point is among the 3 nearest


def test_nearest_on_map_is_a_sort_of_the_distances():
    rng = np.random.default_rng(3)
    coords = rng.standard_normal((5000, 2)).astype(np.float32)
    d = np.linalg.norm(coords.astype(np.float64) - coords[42], axis=1)
    d[42] = np.inf
    np.testing.assert_array_equal(
        kept.nearest_on_map(coords, 42, 10), np.argsort(d, kind="stable")[:10]
    )


def test_a_map_without_its_rows_is_answered_by_a_scan(smollm2):
    """A whole-vocabulary map carries no rows (an array of width 0): the scan answers."""
    ids = np.arange(smollm2.rows, dtype=np.int64)
    vectors, coords = a_map(smollm2, ids)
    found = kept.kept_neighbours(
        ids,
        coords,
        5,
        vectors=np.zeros((len(ids), 0), np.float32),
        searcher=NeighborSearcher(smollm2),
    )
    assert found is not None and len(found.rows) == 10
    exact, n_kept = reference(vectors, coords, 5)
    np.testing.assert_array_equal(found.rows, exact)
    assert found.n_kept == n_kept
