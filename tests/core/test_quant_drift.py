"""Neighbour drift on real SmolLM2 rows (a BF16 and a Q4_0 GGUF written with gguf.GGUFWriter):
the approximate path (sign-code shortlists, exact rerank) against the exact scan and against
independent numpy cosines and dot products."""

from __future__ import annotations

from pathlib import Path

import gguf
import ml_dtypes  # noqa: F401  (safetensors reads BF16 through it)
import numpy as np
import pytest
from safetensors.numpy import load_file

from explorer.core.model.dtypes import BF16
from explorer.core.model.open import open_model
from explorer.core.quant.drift import (
    DEPTH,
    Drift,
    choose_method,
    exact_drifts,
    neighbour_drifts,
    sample_ids,
)
from explorer.core.quant.drift_approx import approximate_drifts
from explorer.core.quant.precision import Precision, of_model
from tests.support.models import decoded, stored, write_gguf

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
ROWS = 1200


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(ref, other, r, q): the two precisions and their rows as numpy decodes them."""
    values = load_file(str(SLICE))["token_embd.weight"][:ROWS].astype(np.float32)
    values[7] = 0.0  # a zero row: no neighbours of its own, scored 0 as a neighbour
    folder = tmp_path_factory.mktemp("drift")
    out = []
    for name in ("BF16", "Q4_0"):
        raw = stored(values, name)
        path = write_gguf(folder / f"m.{name}.gguf", {"token_embd.weight": (raw, name)})
        out.append((of_model(open_model(path, tokenizer=False)), decoded(raw, name)))
    (ref, r), (other, q) = out
    return ref, other, r.astype(np.float64), q.astype(np.float64)


def _scores(rows: np.ndarray, ids: np.ndarray, metric: str) -> np.ndarray:
    """float64 [n, rows]: numpy's scores of each sampled row with every row, itself -inf."""
    x = rows
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1)
        x = np.divide(x, norms[:, None], where=norms[:, None] > 0, out=np.zeros_like(x))
    s = x[ids] @ x.T
    s[np.arange(len(ids)), ids] = -np.inf
    return s


def _assert_best(top: np.ndarray, scores: np.ndarray, depth: int) -> None:
    """`top` [n, depth] holds each row's `depth` best scores, best first (float32 kernels: a
    neighbour may trade places with one whose score is equal to 1e-5)."""
    got = np.take_along_axis(scores, top, axis=1)
    best = -np.sort(-scores, axis=1)[:, :depth]
    np.testing.assert_allclose(got, best, atol=1e-5, rtol=1e-5)
    assert all(len(set(row)) == depth for row in top.tolist())


def _plain_overlap(d: Drift) -> np.ndarray:
    a, b = d.ref_top[:, : d.k].tolist(), d.other_top[:, : d.k].tolist()
    return np.array([len(set(x) & set(y)) for x, y in zip(a, b, strict=True)])


def _plain_displacement(d: Drift) -> np.ndarray:
    out = []
    for a, b in zip(d.ref_top.tolist(), d.other_top.tolist(), strict=True):
        where = {t: r for r, t in enumerate(b)}
        out.append(np.mean([abs(where.get(t, DEPTH) - r) for r, t in enumerate(a[: d.k])]))
    return np.array(out)


def _clear(scores: np.ndarray, k: int = 10) -> np.ndarray:
    """Rows whose k-th and (k+1)-th scores differ enough that float32 cannot swap them."""
    s = -np.sort(-scores, axis=1)
    return s[:, k - 1] - s[:, k] > 2e-5


@pytest.mark.parametrize("metric", ["cosine", "dot"])
def test_full_budget_approximate_drift_is_the_exact_drift(pair, metric):
    ref, other, r, q = pair
    measured = np.ones(ref.rows, bool)
    measured[7] = False
    measured[100:140] = False  # rows that may not be neighbours
    ids = sample_ids(measured, 300)
    exact = exact_drifts(ref, other, ids, measured, (metric,))[metric]
    approx = approximate_drifts(
        ref, other, ids, measured, (metric,), wide=ref.rows, narrow=ref.rows
    )[metric]
    assert (exact.method, approx.method) == ("exact", "approximate")
    assert approx.scored == measured.sum() - 1  # every row but the query itself
    masked = []
    for rows, d_top in ((r, "ref_top"), (q, "other_top")):
        scores = _scores(rows, ids, metric)
        scores[:, ~measured] = -np.inf
        masked.append(scores)
        for d in (exact, approx):
            _assert_best(getattr(d, d_top), scores, DEPTH)
    np.testing.assert_allclose(
        approx.ref_scores, np.take_along_axis(masked[0], approx.ref_top, 1), rtol=1e-5, atol=1e-5
    )
    clear = _clear(masked[0]) & _clear(masked[1])
    assert clear.mean() > 0.6
    np.testing.assert_array_equal(approx.overlap[clear], exact.overlap[clear])
    for top in ("ref_top", "other_top"):  # the same ten (their order may swap near-ties)
        a, e = getattr(approx, top)[clear, :10], getattr(exact, top)[clear, :10]
        np.testing.assert_array_equal(np.sort(a, axis=1), np.sort(e, axis=1))


def test_shortlists_find_the_neighbours_and_figures_equal_numpy(pair):
    ref, other, r, q = pair
    measured = np.ones(ref.rows, bool)
    measured[7] = False
    ids = sample_ids(measured, 200, seed=3)
    drift = approximate_drifts(ref, other, ids, measured, ("cosine",), wide=240, narrow=60)[
        "cosine"
    ]
    assert drift.scored < 120  # at most the union of two shortlists of 60
    for rows, top in ((r, drift.ref_top), (q, drift.other_top)):
        scores = _scores(rows, ids, "cosine")
        scores[:, ~measured] = -np.inf
        found = np.take_along_axis(scores, top, 1)
        # exact scores of what was found, best first, never the query or an excluded row
        assert np.all(np.diff(found, axis=1) <= 1e-6)
        assert not np.isin(top, [7]).any() and not (top == ids[:, None]).any()
        truth = np.argsort(-scores, axis=1)[:, :10]
        recall = np.mean([len(set(a) & set(b)) for a, b in zip(truth, top[:, :10], strict=True)])
        assert recall >= 9.5  # of 10
    np.testing.assert_allclose(
        drift.ref_scores, np.take_along_axis(_scores(r, ids, "cosine"), drift.ref_top, 1), 1e-5
    )
    np.testing.assert_array_equal(drift.overlap, _plain_overlap(drift))
    np.testing.assert_allclose(drift.displacement, _plain_displacement(drift))
    changed = drift.most_changed(20)
    order = sorted(
        range(len(ids)), key=lambda i: (drift.overlap[i], -drift.displacement[i], ids[i])
    )
    assert changed.tolist() == ids[order[:20]].tolist()


def test_the_exact_scan_serves_small_matrices_and_large_ones_get_shortlists(pair):
    ref, other, _, _ = pair
    measured = np.ones(ref.rows, bool)
    drifts = neighbour_drifts(ref, other, sample_ids(measured, 50), measured)
    assert {d.method for d in drifts.values()} == {"exact"}
    # a Qwen-sized BF16 matrix (never read: zero strides) against its Q4_0 blocks
    big = np.broadcast_to(np.zeros((1, 1), BF16), (248320, 4096))
    blocks = gguf.quants.quantize(np.zeros((1, 4096), np.float32), gguf.GGMLQuantizationType.Q4_0)
    q4 = np.broadcast_to(blocks, (248320, blocks.shape[1]))
    big_ref = Precision("big", "BF16", big, 4096)
    assert choose_method(big_ref, Precision("q", "Q4_0", q4, 4096), 2000) == "approximate"
    assert choose_method(big_ref, Precision("q", "Q4_0", q4, 4096), 20) == "exact"
    # a format the kernels cannot read row by row keeps the exact scan
    assert choose_method(big_ref, Precision("f64", "F64", big, 4096), 2000) == "exact"
