"""Vocabulary statistics against numpy references on real model files with planted oddities."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from explorer.core.analysis import kinds
from explorer.core.analysis.dimensions import dimension_column
from explorer.core.analysis.stats import compute_stats, streaming_pass
from explorer.core.errors import AnalysisError, Cancelled
from explorer.core.model.open import open_model
from tests.support.jobs import Recorder
from tests.support.models import (
    HUGE,
    NEAR,
    NUMPY_DTYPES,
    OUTLIER_DIM,
    PAD,
    TINY,
    ZERO,
    planted_model,
    write_model,
)


def _robust_z(x):
    med = np.median(x)
    return (x - med) / (1.4826 * np.median(np.abs(x - med)))


@pytest.mark.parametrize(("dtype", "tied"), [("BF16", True), ("F32", False), ("F16", True)])
def test_figures_equal_numpy(tmp_path, dtype, tied):
    folder, stored, _ = planted_model(tmp_path / "m", dtype, tied)
    model = open_model(folder)
    result = compute_stats(model, cache_dir=tmp_path / "cache")
    e = stored.astype(np.float64)
    norms = np.linalg.norm(e, axis=1)
    np.testing.assert_allclose(result.norms, norms, rtol=1e-12)
    # the kernel sums 64-row sub-blocks in float32 (documented: ~1e-7 relative)
    tol = 1e-6
    np.testing.assert_allclose(result.dim_mean, e.mean(axis=0), rtol=tol, atol=tol * 1e-3)
    np.testing.assert_allclose(result.dim_std, e.std(axis=0), rtol=tol)
    d = result.as_dict()
    assert d["rows"] == len(e) and d["dim"] == e.shape[1]
    assert d["norms"]["median"] == pytest.approx(np.median(norms))
    assert d["norms"]["mean"] == pytest.approx(norms.mean())
    counts, edges = np.histogram(norms, bins=50)
    assert d["norms"]["histogram"]["counts"] == counts.tolist()
    np.testing.assert_allclose(d["norms"]["histogram"]["edges"], edges)
    assert d["dimensions"]["outliers"] == [OUTLIER_DIM]

    # suspicious tokens by the documented rules, recomputed here from the raw matrix
    used = np.arange(len(e)) < len(e) - PAD
    logn = np.log(norms[used & (norms > 0)])
    z = np.full(len(e), np.nan)
    z[used & (norms > 0)] = _robust_z(logn)
    ref = e[~used].mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = e @ ref / (norms * np.linalg.norm(ref))
    ok = used & (norms > 0)
    p99 = np.percentile(cos[ok], 99)
    expected = {(i, "zero") for i in np.flatnonzero(used & (norms == 0))}
    expected |= {(i, "tiny_norm") for i in np.flatnonzero(ok & (z <= -4))}
    expected |= {(i, "huge_norm") for i in np.flatnonzero(ok & (z >= 4))}
    expected |= {(i, "near_unused") for i in np.flatnonzero(ok & (cos > p99) & (cos >= 0.5))}
    got = {(s["id"], s["reason"]) for s in d["suspicious"]}
    assert got == expected
    assert {(ZERO, "zero"), (TINY, "tiny_norm"), (HUGE, "huge_norm")} <= got
    assert {(i, "near_unused") for i in NEAR} <= got
    near = {s["id"]: s["score"] for s in d["suspicious"] if s["reason"] == "near_unused"}
    for i in NEAR:
        assert near[i] == pytest.approx(cos[i], rel=1e-9)
    assert sum(v for k, v in d["kinds"].items() if k in kinds.KINDS) == len(e)
    assert d["kinds"]["unused"] == PAD


def test_kernel_and_block_paths_agree(tmp_path):
    folder, _, _ = planted_model(tmp_path / "m", "BF16")
    model = open_model(folder)
    kernel = streaming_pass(model)
    bf16 = model.matrix
    model.matrix = bf16.view(ml_dtypes.bfloat16).astype(
        np.float32
    )  # same values: the kernel on decoded float32 blocks
    decoded = streaming_pass(model)
    model.matrix = bf16.view(ml_dtypes.bfloat16).astype(
        np.float64
    )  # same values: the numpy path (float64 input)
    blocks = streaming_pass(model)
    for other in (decoded, blocks):
        np.testing.assert_array_equal(kernel.sq, other.sq)
        np.testing.assert_allclose(kernel.refdot, other.refdot, rtol=1e-12)
        np.testing.assert_allclose(kernel.mean, other.mean, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(kernel.m2, other.m2, rtol=1e-6)
        assert kernel.count == other.count == model.rows


def test_nonfinite_rows_are_listed_and_left_out_of_dimensions(tmp_path):
    folder, stored, _ = planted_model(tmp_path / "m", "F32")
    model = open_model(folder)
    bad = stored.copy()
    bad[90, 3] = np.inf
    model.matrix = bad  # an in-memory stand-in for a damaged file
    result = compute_stats(model, use_cache=False)
    assert (90, "nonfinite") in {(s.id, s.reason) for s in result.suspicious}
    keep = np.ones(len(bad), bool)
    keep[90] = False
    exact = bad[keep].astype(np.float64).std(axis=0)
    np.testing.assert_allclose(result.dim_std, exact, rtol=1e-6)  # float32 sub-block sums
    assert np.isnan(result.norms[90])


def test_cache_is_used_and_invalidated_by_a_changed_file(tmp_path):
    folder, _, _ = planted_model(tmp_path / "m", "BF16")
    cache = tmp_path / "cache"
    first = compute_stats(open_model(folder), cache_dir=cache)
    second = compute_stats(open_model(folder), cache_dir=cache)
    assert not first.cached and second.cached
    assert second.as_dict() == first.as_dict()
    st = (folder / "model.safetensors").stat()
    os.utime(folder / "model.safetensors", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert not compute_stats(open_model(folder), cache_dir=cache).cached


def test_cancel_and_progress(tmp_path):
    folder, _, _ = planted_model(tmp_path / "m", "F16")
    model = open_model(folder)
    ctx = Recorder()
    compute_stats(model, ctx, use_cache=False)
    seen = ctx.fractions
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    cancelled = Recorder()
    cancelled.cancel()
    with pytest.raises(Cancelled):
        compute_stats(model, cancelled, use_cache=False)


def test_dimension_column(tmp_path):
    folder, stored, _ = planted_model(tmp_path / "m", "BF16")
    model = open_model(folder)
    col = dimension_column(model, OUTLIER_DIM)
    np.testing.assert_array_equal(col, stored[:, OUTLIER_DIM].astype(np.float64))
    with pytest.raises(AnalysisError):
        dimension_column(model, model.dim)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b" cat", "latin"),
        ("Привет".encode(), "cyrillic"),
        ("αβγ".encode(), "greek"),
        ("猫が".encode(), "cjk"),
        ("مرحبا".encode(), "arabic"),
        (b"2024", "digits"),
        (b" ,", "punctuation"),
        ("🐱".encode(), "symbols"),
        (b"\n\n", "whitespace"),
        (b"\xe7", "bytes"),
        ("catкот".encode(), "mixed"),
    ],
)
def test_text_kind(data, kind):
    assert kinds.text_kind(data) == kind


def test_token_kinds_on_a_real_tokenizer(tmp_path):
    folder, _, _ = planted_model(tmp_path / "m", "F32")
    model = open_model(folder)
    tk = kinds.token_kinds(model)
    tok = model.tokenizer
    names = tk.names()
    for i in tok.special_ids:
        assert names[i] == "special"
    assert all(n == "unused" for n in names[model.rows - PAD :])
    cat = tok.find(" cat")
    assert names[cat] == "latin" and tk.word_start[cat] and not tk.continuation[cat]
    assert not (tk.word_start & tk.continuation).any()


@pytest.mark.parametrize("dtype", ["BF16", "F32"])
def test_dimension_std_is_stable_far_from_zero(tmp_path, dtype):
    """A large common offset with a small spread: the naive E[x²] − E[x]² would lose it all."""
    rng = np.random.default_rng(4)
    values = 300.0 + rng.standard_normal((3000, 24)) * np.linspace(0.5, 4.0, 24)
    matrix = values.astype(NUMPY_DTYPES[dtype])
    write_model(tmp_path / "m", matrix=matrix)
    result = compute_stats(open_model(tmp_path / "m"), use_cache=False)
    exact = matrix.astype(np.float64)
    np.testing.assert_allclose(result.dim_std, exact.std(axis=0), rtol=1e-6)
    np.testing.assert_allclose(result.dim_mean, exact.mean(axis=0), rtol=1e-9)
