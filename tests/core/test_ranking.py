"""Top-k selection (core/ranking.py) against a full stable sort."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.ranking import top_k, top_k_rows, top_unordered


def _sorted_top(key: np.ndarray, k: int) -> list[int]:
    finite = np.flatnonzero(np.isfinite(key))
    return finite[np.argsort(-key[finite], kind="stable")][:k].tolist()


@pytest.mark.parametrize("k", [1, 5, 40, 100])
def test_top_k_equals_a_full_stable_sort_with_ties_and_non_finite(k):
    rng = np.random.default_rng(k)
    key = rng.integers(0, 12, size=60).astype(np.float64)  # many ties, also at the k-th key
    key[[3, 17, 30]] = [np.nan, -np.inf, np.inf]
    assert top_k(key, k).tolist() == _sorted_top(key, k)


def test_top_unordered_holds_the_largest_keys():
    key = np.random.default_rng(1).permutation(100).astype(np.float64)
    assert sorted(top_unordered(key, 7).tolist()) == sorted(np.argsort(-key)[:7].tolist())


@pytest.mark.parametrize("k", [1, 3, 8])
def test_top_k_rows_is_each_rows_top_k(k):
    rng = np.random.default_rng(7)
    scores = np.stack([rng.permutation(8) for _ in range(6)]).astype(np.float32)
    got = top_k_rows(scores, k)
    assert got.shape == (6, k)
    for row, cols in zip(scores, got, strict=True):
        assert cols.tolist() == np.argsort(-row)[:k].tolist()
