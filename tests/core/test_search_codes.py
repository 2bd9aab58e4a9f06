"""The fast index's kernels against plain numpy: transform, codes, scans, selection, gather."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from explorer.core.ranking import top_unordered
from explorer.core.search import codes as search_codes
from explorer.core.search import exact as search_exact


def hadamard(n: int) -> np.ndarray:
    h = np.ones((1, 1))
    while len(h) < n:
        h = np.block([[h, h], [h, -h]])
    return h


@pytest.mark.parametrize("n", [4, 8, 64, 4096])
def test_walsh_hadamard_transform_is_the_hadamard_matrix_product(n):
    v = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    want = hadamard(n) @ v.astype(np.float64)
    got = v.copy()
    search_codes._fwht(got)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_codes_are_the_signs_of_the_rotated_rows():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((300, 100)).astype(np.float32)
    signs = search_codes.rotation_signs(100, 256, seed=3)  # two rotations of 128
    codes = search_codes.encode(w, signs)
    bits = np.unpackbits(codes.view(np.uint8), axis=1, bitorder="little").astype(bool)
    h = hadamard(128)
    for r in range(2):
        padded = np.zeros((300, 128))
        padded[:, :100] = w * signs[r, :100]
        rotated = padded @ h.T
        clear = np.abs(rotated) > 1e-3  # float32 rounding may flip a sign only right at zero
        assert clear.mean() > 0.99
        np.testing.assert_array_equal(bits[:, r * 128 : (r + 1) * 128][clear], rotated[clear] > 0)


def _scan_inputs(n: int, words: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2**63, (n, words), dtype=np.int64).view(np.uint64)
    codes ^= rng.integers(0, 2, (n, words), dtype=np.int64).view(np.uint64) << np.uint64(63)
    a = rng.uniform(-1, 1, n).astype(np.float32)
    wn = rng.uniform(0, 1, n).astype(np.float32)
    scale = rng.uniform(0.5, 2, n).astype(np.float32)
    penalty = np.where(rng.random(n) < 0.01, -np.inf, 0).astype(np.float32)
    return codes, codes[n // 2].copy(), search_codes.angle_table(64 * words), a, wn, scale, penalty


def test_scans_match_hamming_distances_serial_and_parallel():
    codes, q, table, a, wn, scale, penalty = _scan_inputs(50_000, 8)
    bits = np.unpackbits((codes ^ q).view(np.uint8), axis=1)
    h = bits.sum(1)
    want = (0.3 * a + 0.7 * wn * np.cos(np.pi * h / 512)) * scale + penalty
    for parallel in (False, True):
        got = search_codes.scan_all(codes, q, table, a, wn, scale, penalty, 0.3, 0.7, parallel)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        ids = np.random.default_rng(2).choice(len(codes), 20_000, replace=False)
        args = (codes, ids, q, table, a, wn, scale, penalty, 0.3, 0.7, parallel)
        part = search_codes.scan_ids(*args)
        np.testing.assert_allclose(part, want[ids], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("count", [1, 10, 64, 1000, 5000, 20_000])
@pytest.mark.parametrize("in_order", [False, True])
def test_top_candidates_are_the_largest_finite_values(count, in_order):
    rng = np.random.default_rng(count)
    est = rng.standard_normal(100_000).astype(np.float32)
    est[rng.choice(len(est), 500, replace=False)] = -np.inf
    est[:50] = est[50]  # ties
    est[-50:] = np.sort(est)[-count]  # ties at the cut
    got = search_codes.top_candidates(est, count, in_order=in_order)
    if in_order:
        assert np.all(np.diff(got) > 0)
    assert len(got) == len(set(got.tolist())) == count
    kth = np.sort(est)[-count]
    assert np.all(est[got] >= kth) and np.isfinite(est[got]).all()
    assert np.sum(est > kth) <= count  # nothing strictly better was left out
    assert np.array_equal(np.sort(est[got]), np.sort(est[top_unordered(est, count)]))


def test_top_candidates_with_few_finite_values():
    est = np.full(100_000, -np.inf, np.float32)
    est[[5, 70, 900]] = [1, 2, 3]
    assert sorted(search_codes.top_candidates(est, 1000).tolist()) == [5, 70, 900]


@pytest.mark.parametrize("count", [10, 100, 3000])
def test_gathered_bf16_dots_match_numpy(count):
    rng = np.random.default_rng(count)
    matrix = rng.standard_normal((5000, 96)).astype(ml_dtypes.bfloat16)
    ids = rng.choice(5000, count, replace=False)
    q = rng.standard_normal((1, 96)).astype(np.float32)
    got = search_exact.dots_for_ids(matrix, ids, q)[0]
    want = matrix[ids].astype(np.float64) @ q[0].astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_query_code_matches_row_codes_and_estimates_the_cosine():
    rng = np.random.default_rng(5)
    dim = 300
    u = np.zeros(dim, np.float32)
    u[0] = 1
    signs = search_codes.rotation_signs(dim, 2048, seed=2)  # four rotations of 512
    q = rng.standard_normal(dim).astype(np.float32)
    qc = search_codes.query_code(q, u, signs)
    a, wn, w = search_codes.split(q[None], u)
    np.testing.assert_array_equal(qc.code, search_codes.encode(w, signs)[0])
    assert qc.aq == pytest.approx(float(a[0])) and qc.wq == pytest.approx(float(wn[0]))
    # rows at known angles to the query's w part: the asymmetric estimate follows the cosine
    wq = w[0] / np.linalg.norm(w[0])
    cos = np.linspace(-0.9, 0.95, 40)
    other = rng.standard_normal((40, dim)).astype(np.float32)
    other[:, 0] = 0
    other -= (other @ wq)[:, None] * wq
    other /= np.linalg.norm(other, axis=1, keepdims=True)
    rows = cos[:, None] * wq + np.sqrt(1 - cos**2)[:, None] * other
    _, _, rw = search_codes.split(rows.astype(np.float32), u)
    codes = search_codes.encode(rw, signs)
    ones = np.ones(40, np.float32)
    est = search_codes.scan_ids_q(
        codes,
        np.arange(40),
        qc,
        np.zeros(40, np.float32),
        ones,
        ones,
        np.zeros(40, np.float32),
        parallel=False,
    )
    assert np.abs(est / qc.wq - cos).max() < 0.12
    assert np.corrcoef(est, cos)[0, 1] > 0.99
