"""The index build's batched kernels against the one-query paths they stand for, on real rows.

The fixture is a Q8_0 GGUF (written with gguf.GGUFWriter) of the demo model's rows
(all-MiniLM-L6-v2), with planted duplicates so that scores tie: a run of rows equal to one row,
and a twin of another. References: `scan_all` / `head_scores` / `stage2` for one query at a
time, numpy popcounts, and numpy top-K of the same dots.
"""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from explorer.core.search import build as search_build
from explorer.core.search import codes as search_codes
from explorer.core.search import tune as search_tune
from explorer.core.search import tune_ranks
from explorer.core.search.truth import KEEP, METRICS, Truth
from tests.support.models import stored, write_gguf

ROWS = 3000
RUN = (100, range(2000, 2014))  # row 100 and 14 copies of it: more ties than the top 10 holds
TWIN = (7, 2500)  # row 2500 is a copy of row 7


def _real_rows() -> np.ndarray:
    demo = open_model(demo_model_dir(), tokenizer=False)
    rows = np.asarray(demo.vectors(range(ROWS)), np.float32).copy()
    rows[list(RUN[1])] = rows[RUN[0]]
    rows[TWIN[1]] = rows[TWIN[0]]
    return rows


@pytest.fixture(scope="module")
def index_and_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("batch")
    path = write_gguf(
        folder / "m.gguf", {"token_embd.weight": (stored(_real_rows(), "Q8_0"), "Q8_0")}
    )
    model = open_model(path, tokenizer=False)
    return search_build.build(model, folder / "cache"), model


def _queries(model, index):
    qids = np.array([0, RUN[0], 2005, TWIN[0], TWIN[1], 1234, 2999, *range(300, 2900, 211)])
    qrows = np.asarray(model.vectors(qids), np.float32)
    return qids, qrows, [index.query_code(q) for q in qrows]


def _penalty(index) -> np.ndarray:
    valid = np.isfinite(index.sq) & (index.sq > 0)
    return np.where(valid, 0, -np.inf).astype(np.float32)


def test_batched_hamming_scan_equals_one_query_scans_with_ties(index_and_model):
    index, model = index_and_model
    qids, _, qcs = _queries(model, index)
    hw = index.head.shape[1]
    h = search_codes.hamming_many(index.head, np.stack([qc.code[:hw] for qc in qcs]))
    assert h.shape == (len(qids), ROWS)
    bits = np.unpackbits(index.head.view(np.uint8), axis=1, bitorder="little")
    table, penalty = search_codes.angle_table(64 * hw), _penalty(index)
    ones = np.ones(ROWS, np.float32)
    for q, qc in enumerate(qcs):
        qbits = np.unpackbits(qc.code[:hw].view(np.uint8), bitorder="little")
        np.testing.assert_array_equal(h[q], (bits != qbits).sum(1))
        one = index.head_scores(qc, ones, penalty, parallel=False)
        est = (np.float32(qc.aq) * index.a + np.float32(qc.wq) * index.wn * table[h[q]]) * ones
        np.testing.assert_allclose(one, est + penalty, rtol=1e-6, atol=1e-7)
        # ties: equal rows are equally far from every query, in the batch as in one scan
        assert (h[q, list(RUN[1])] == h[q, RUN[0]]).all() and h[q, TWIN[1]] == h[q, TWIN[0]]
        assert (one[list(RUN[1])] == one[RUN[0]]).all() and one[TWIN[1]] == one[TWIN[0]]
    assert (h[1] == 0)[[RUN[0], *RUN[1]]].all()  # the query's own code


def _one_query_hits(index, qc, scale, penalty, qid, true, c1s, c2s) -> np.ndarray:
    """What tune needs, from one query's stage-one and stage-two scans: stage one ordered by
    estimate, ties by lower id, as search cuts it."""
    if c1s[-1] >= index.rows:
        est1 = np.zeros(index.rows, np.float32) + penalty
    else:
        est1 = index.head_scores(qc, scale, penalty, parallel=False)
    est1[qid] = -np.inf
    finite = np.flatnonzero(np.isfinite(est1))
    order = finite[np.lexsort((finite, -est1[finite]))][: c1s[-1]]
    est2 = index.stage2(qc, order, scale, penalty, parallel=False)
    hits = np.zeros((len(c1s), len(c2s)), np.int64)
    for p in np.flatnonzero(np.isin(order, true)).tolist():
        better = np.cumsum(est2 > est2[p])
        for i, c1 in enumerate(c1s):
            if p < c1:
                hits[i] += better[min(c1, len(better)) - 1] < np.asarray(c2s)
    return np.minimum(hits, min(10, len(true)))


@pytest.mark.parametrize("widest", ["sampled cut", "most rows", "every row"])
def test_tuning_hits_equal_one_query_search_stages(index_and_model, monkeypatch, widest):
    index, model = index_and_model
    if widest == "sampled cut":  # stage one keeps 10 to a few hundred of the 3000 rows
        monkeypatch.setattr(search_tune, "MIN_C1", 5)  # 10 cuts through the run of equal rows
        monkeypatch.setattr(search_tune, "C1_FRACTIONS", (1 / 300, 1 / 64, 1 / 16, 1 / 8))
        monkeypatch.setattr(search_tune, "C2_STEPS", (5, 10, 20, 40, 80, 160))
    elif widest == "every row":
        monkeypatch.setattr(search_tune, "MIN_C1", ROWS)
    c1s, c2s = search_tune.grid(index.rows)
    assert (c1s[-1] < ROWS // 4, c1s[-1] >= ROWS) == (
        widest == "sampled cut",
        widest == "every row",
    )
    qids, qrows, qcs = _queries(model, index)
    penalty = _penalty(index)
    scales = np.stack([np.ones(index.rows, np.float32), np.sqrt(index.sq).astype(np.float32)])
    rng = np.random.default_rng(4)
    true_sets = [  # real neighbours (the run of equal rows among them) and random rows
        [np.unique(np.r_[list(RUN[1])[:12], rng.choice(index.rows, 6)]) for _ in qids]
        for _ in METRICS
    ]
    got = tune_ranks.batch_hits(index, qcs, scales, penalty, qids, true_sets, c1s, c2s)
    assert got.any()
    for m in range(len(METRICS)):
        for q, qid in enumerate(qids):
            want = _one_query_hits(
                index, qcs[q], scales[m], penalty, int(qid), true_sets[m][q], c1s, c2s
            )
            np.testing.assert_array_equal(got[m, q], want, err_msg=f"{METRICS[m]} query {qid}")


def _numpy_sets(dots, sq, qids, metric, k=10) -> list[set[int]]:
    key = dots / np.sqrt(sq).astype(np.float32)[:, None] if metric == "cosine" else dots.copy()
    key[qids, np.arange(len(qids))] = -np.inf
    out = []
    for col in key.T:
        kth = np.sort(col)[-k]
        out.append(set(np.flatnonzero(col >= kth - 1e-6 * abs(kth)).tolist()))
    return out


def test_running_top_k_keeps_every_row_tied_with_the_tenth():
    rows = _real_rows().astype(np.float32)
    sq = (rows.astype(np.float64) ** 2).sum(1)
    qids = np.array([RUN[0], 2003, TWIN[0], 5, 1500, 2999])
    dots = rows @ rows[qids].T  # float32 [rows, queries]
    truth = Truth(qids)
    for start in range(0, ROWS, 700):  # blocks, the last a partial one
        truth.add(start, np.ascontiguousarray(dots[start : start + 700]), sq[start : start + 700])
    for metric in METRICS:
        got = [set(s.tolist()) for s in truth.sets(metric)]
        assert got == _numpy_sets(dots, sq, qids, metric)
    # the run: 14 copies tie with the query itself; all of them are right answers
    assert set(RUN[1]) <= got[0] and len(RUN[1]) + 1 <= KEEP
    assert TWIN[1] in got[2]


@pytest.mark.parametrize("spread", ["wide", "narrow", "consecutive", "extremes"])
def test_ranked_keys_equal_a_full_sort(spread):
    """Stage one's cuts: the histogram's picks equal the keys at those ranks of a full sort."""
    rng = np.random.default_rng(len(spread))
    for m in (1, 2, 37, 4096, 9000):
        if spread == "wide":
            keys = rng.integers(0, 2**64 - 1, m, dtype=np.uint64, endpoint=True)
        elif spread == "narrow":  # one estimate, rows told apart by id only (as ties are)
            keys = (np.uint64(0xBF800000) << np.uint64(32)) | rng.integers(0, 2**32, m, np.uint64)
        elif spread == "consecutive":
            keys = np.arange(m, dtype=np.uint64) + np.uint64(2**40)
        else:
            keys = np.r_[np.uint64(0), np.uint64(2**64 - 1), rng.integers(0, 2**20, m, np.uint64)]
        keys = np.unique(keys)
        ranks = np.unique(np.r_[1, len(keys), rng.integers(1, len(keys) + 1, 7)]).astype(np.int64)
        want = np.sort(keys)[::-1][ranks - 1]
        np.testing.assert_array_equal(tune_ranks._ranked(keys, ranks), want)
