"""Our UMAP layout stage (explorer.core.map.umap) against its definitions."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import Cancelled
from explorer.core.map import projection
from explorer.core.map import umap as layout


def clusters(n: int = 300, dim: int = 32, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((k, dim)) * 4
    labels = rng.integers(0, k, n)
    return (centres[labels] + rng.standard_normal((n, dim))).astype(np.float32), labels


@pytest.mark.parametrize("min_dist", [0.0, 0.05, 0.1, 0.3, 0.8])
def test_ab_params_match_scipy_curve_fit(min_dist):
    from scipy.optimize import curve_fit

    x = np.linspace(0, 3, 300)
    y = np.where(x < min_dist, 1.0, np.exp(-(x - min_dist)))
    (a_ref, b_ref), _ = curve_fit(lambda x, a, b: 1.0 / (1.0 + a * x ** (2 * b)), x, y)
    a, b = layout.find_ab_params(1.0, min_dist)
    assert a == pytest.approx(a_ref, rel=2e-3) and b == pytest.approx(b_ref, rel=2e-3)


@pytest.mark.parametrize("min_dist", [0.05, 0.1, 0.5])
def test_gradient_tables_follow_the_curve_within_a_percent(min_dist):
    from explorer.core.map import umap_kernel

    layout._kernel()  # (the numba cache folder first)
    a, b = layout.find_ab_params(1.0, min_dist)
    attract, repel = umap_kernel.coefficient_tables(a, b)
    d2 = np.float32(10.0) ** np.random.default_rng(0).uniform(-6, 6, 2000).astype(np.float32)
    bins = np.array([umap_kernel._bin(v) for v in d2])
    exact_attract = -2 * a * b * d2 ** (b - 1) / (1 + a * d2**b)
    exact_repel = 2 * b / ((0.001 + d2) * (1 + a * d2**b))
    np.testing.assert_allclose(attract[bins], exact_attract, rtol=0.01)
    np.testing.assert_allclose(repel[bins], exact_repel, rtol=0.01)
    # beyond the covered range the nearest bin serves
    assert umap_kernel._bin(np.float32(1e-30)) == 0
    assert umap_kernel._bin(np.float32(1e30)) == len(attract) - 1


def test_memberships_sum_to_log2_k_per_point():
    rng = np.random.default_rng(1)
    dists = np.sort(rng.uniform(0.1, 1.0, (200, 15)), axis=1)
    dists[:, 0] = 0.0  # each point is its own first neighbour
    dists[:5, 1:4] = dists[:5, 1:2]  # ties at the nearest distance
    sigma, rho = layout.smooth_knn_dist(dists)
    assert np.array_equal(rho, dists[:, 1])
    p = np.exp(-np.maximum(dists[:, 1:] - rho[:, None], 0) / sigma[:, None])
    np.testing.assert_allclose(p.sum(axis=1), np.log2(15), atol=1e-4)


def test_fuzzy_graph_is_the_fuzzy_union_of_memberships():
    x, _ = clusters(120)
    idx, dist = projection.knn_cosine(projection.prepare(x), 10)
    head, tail, w = layout.fuzzy_graph(idx, dist)
    n = len(x)
    sigma, rho = layout.smooth_knn_dist(dist)
    p = np.zeros((n, n))
    for i in range(n):
        for j, d in zip(idx[i, 1:], dist[i, 1:], strict=True):
            p[i, j] = np.exp(-max(d - rho[i], 0) / sigma[i])
    dense = p + p.T - p * p.T
    got = np.zeros((n, n))
    got[head, tail] = w
    np.testing.assert_allclose(got, dense, atol=1e-6)
    assert not np.any(head == tail)
    keys = head.astype(np.int64) * n + tail
    assert np.all(np.diff(keys) > 0)  # sorted, no duplicate edge


def test_layout_keeps_clusters_apart_and_is_deterministic():
    x, labels = clusters(300)
    prepared = projection.prepare(x)
    graph = layout.fuzzy_graph(*projection.knn_cosine(prepared, 15))
    rng = np.random.default_rng(3)
    init = rng.standard_normal((len(x), 2)).astype(np.float32)  # no help from the start
    y = layout.optimize(init, graph, min_dist=0.1, seed=7)
    assert y.shape == (len(x), 2) and y.dtype == np.float32 and np.isfinite(y).all()
    np.testing.assert_array_equal(y, layout.optimize(init, graph, min_dist=0.1, seed=7))
    d = np.linalg.norm(y[:, None] - y[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    assert (labels[d.argmin(axis=1)] == labels).mean() > 0.98
    assert projection.trustworthiness(x, y) > 0.9


def test_layout_is_the_same_on_one_thread_or_two():
    """Each point is moved by one thread, reading the others from the epoch's snapshot."""
    import numba

    x, _ = clusters(400, seed=2)
    graph = layout.fuzzy_graph(*projection.knn_cosine(projection.prepare(x), 10))
    init = np.random.default_rng(4).standard_normal((len(x), 2)).astype(np.float32)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = layout.optimize(init, graph, min_dist=0.1, n_epochs=60, seed=5)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        every = layout.optimize(init, graph, min_dist=0.1, n_epochs=60, seed=5)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, every)


def test_epoch_callback_reports_and_can_cancel():
    x, _ = clusters(60)
    graph = layout.fuzzy_graph(*projection.knn_cosine(projection.prepare(x), 8))
    seen: list[tuple[int, int]] = []

    def epoch(done: int, total: int) -> None:
        seen.append((done, total))
        if done == 3 * layout.EPOCHS_PER_CALL:
            raise Cancelled()

    with pytest.raises(Cancelled):
        layout.optimize(np.zeros((60, 2), np.float32) + np.arange(60)[:, None], graph, 0.1, 50,
                        epoch=epoch)  # fmt: skip
    # reported after every kernel call of EPOCHS_PER_CALL epochs, cancelled at the third
    assert seen == [(i * layout.EPOCHS_PER_CALL, 50) for i in range(1, 4)]
