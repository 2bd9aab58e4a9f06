"""Quantisation damage on real SmolLM2 rows: files written with gguf.GGUFWriter in several
types, simulated quantisation, and every figure against an independent numpy computation."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from safetensors.numpy import load_file

from explorer.core.model.open import open_model
from explorer.core.quant.align import MisalignedError, check_aligned
from explorer.core.quant.precision import of_model, simulate
from explorer.core.quant.report import compare_files, compare_simulated
from explorer.core.quant.row_pair import row_pair
from tests.support.models import decoded, stored, write_gguf
from tests.support.tokenizers import byte_level_bpe, gguf_tokenizer_keys

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
FILE_TYPES = ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "F16"]


@pytest.fixture(scope="module")
def keys() -> dict:
    return gguf_tokenizer_keys(byte_level_bpe(True), "smollm")


@pytest.fixture(scope="module")
def values(keys) -> np.ndarray:
    """Real SmolLM2 rows (BF16 values as float32), one per token of the test tokenizer."""
    rows = load_file(str(SLICE))["token_embd.weight"][: len(keys["tokens"])]
    return rows.astype(np.float32)


def _write(folder: Path, values: np.ndarray, type_name: str, keys: dict, name: str = "") -> Path:
    raw = stored(values, type_name)
    path = folder / (name or f"m.{type_name}.gguf")
    write_gguf(path, {"token_embd.weight": (raw, type_name)}, tokenizer=keys)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, values, keys) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("quant")
    return {t: _write(folder, values, t, keys) for t in ["BF16", *FILE_TYPES]}


def _expected_rows(r: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray]:
    r64, q64 = r.astype(np.float64), q.astype(np.float64)
    nr, nq = np.linalg.norm(r64, axis=1), np.linalg.norm(q64, axis=1)
    return {
        "relative_error": np.linalg.norm(q64 - r64, axis=1) / nr,
        "cosine": (r64 * q64).sum(axis=1) / (nr * nq),
        "norm_ratio": nq / nr,
        "max_abs_error": np.abs(q64 - r64).max(axis=1),
    }


def _cosines(rows: np.ndarray) -> np.ndarray:
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1)[:, None]
    cos = unit @ unit.T
    np.fill_diagonal(cos, -np.inf)  # a token is not its own neighbour
    return cos


def _assert_exact_top10(found: np.ndarray, rows: np.ndarray) -> None:
    """`found` [n, 10] are the ten best cosines of each row, best first; the kernel works in
    float32, so a neighbour may trade places with one whose cosine is equal to 1e-6."""
    cos = _cosines(rows)
    best = -np.sort(-cos, axis=1)[:, :10]
    got = np.take_along_axis(cos, found, axis=1)
    np.testing.assert_allclose(got, best, atol=1e-6)
    assert all(len(set(ids)) == 10 for ids in found.tolist())


@pytest.mark.parametrize("type_name", FILE_TYPES)
def test_two_files_figures_equal_numpy(files, type_name):
    ref, other = open_model(files["BF16"]), open_model(files[type_name])
    r = gguf.quants.dequantize(
        stored(ref.decode_block(0, ref.rows), "BF16"), gguf.GGMLQuantizationType.BF16
    )
    q = decoded(np.asarray(other.matrix), type_name)
    # the other precision's values are numpy over gguf.quants.dequantize of the file
    np.testing.assert_array_equal(of_model(other).decode_block(0, other.rows), q)
    report = compare_files(ref, other, sample=ref.rows)
    damage = report.damage
    assert damage.measured.all()
    for name, want in _expected_rows(r, q).items():
        np.testing.assert_allclose(getattr(damage, name), want, rtol=1e-9, atol=1e-12, err_msg=name)
    err = (q.astype(np.float64) - r) ** 2
    np.testing.assert_allclose(damage.dim_error, np.sqrt(err.mean(axis=0)), rtol=1e-9)
    rel = _expected_rows(r, q)["relative_error"]
    summary = report.as_dict(ref.tokenizer.piece)
    assert summary["type"] == type_name and summary["rows"] == ref.rows
    assert summary["relative_error"]["median"] == pytest.approx(np.median(rel), rel=1e-9)
    assert summary["relative_error"]["p99"] == pytest.approx(np.quantile(rel, 0.99), rel=1e-9)
    assert summary["relative_error"]["max"] == pytest.approx(rel.max(), rel=1e-9)
    worst = [w["id"] for w in summary["worst"]]
    changed = np.flatnonzero(rel > 0)  # rows that did not change are not listed
    assert worst == changed[np.argsort(-rel[changed], kind="stable")][:20].tolist()
    if worst:
        assert summary["worst"][0]["piece"] == ref.tokenizer.piece(worst[0])
    # neighbour drift over every row: the exact top-10 at each precision, as numpy finds them
    drift = report.drift
    _assert_exact_top10(drift.ref_top[:, :10], r)
    _assert_exact_top10(drift.other_top[:, :10], q)
    a, b = drift.ref_top[:, :10].tolist(), drift.other_top[:, :10].tolist()
    expected = np.array([len(set(x) & set(y)) for x, y in zip(a, b, strict=True)])
    np.testing.assert_array_equal(drift.overlap, expected)
    assert summary["top10_overlap"]["mean"] == pytest.approx(expected.mean() / 10)
    assert summary["top10_overlap"]["sample"] == ref.rows


def test_quantised_file_damages_more_than_f16(files):
    ref = open_model(files["BF16"])
    medians = {
        t: compare_files(ref, open_model(files[t]), sample=0).summary()["relative_error"]["median"]
        for t in FILE_TYPES
    }
    assert medians["F16"] < medians["Q8_0"] < medians["Q5_0"] < medians["Q4_0"]


@pytest.mark.parametrize("type_name", ["Q8_0", "Q5_1", "Q5_0", "Q4_1", "Q4_0", "F16", "BF16"])
def test_simulated_equals_gguf_quantise_then_dequantise(files, type_name):
    model = open_model(files["BF16"])
    r = model.decode_block(0, model.rows)
    qtype = gguf.GGMLQuantizationType[type_name]
    want = gguf.quants.dequantize(gguf.quants.quantize(r, qtype), qtype).astype(np.float32)
    other = simulate(of_model(model), type_name)
    assert other.simulated and other.type_name == type_name
    np.testing.assert_array_equal(other.decode_block(0, model.rows), want)
    (report,) = compare_simulated(model, [type_name], sample=0)
    np.testing.assert_allclose(
        report.damage.relative_error, _expected_rows(r, want)["relative_error"], rtol=1e-9
    )
    assert report.drift is None and report.summary()["top10_overlap"]["sample"] == 0


def test_misaligned_vocabularies_are_refused(tmp_path, values, keys, files):
    swapped = dict(keys, tokens=list(keys["tokens"]))
    swapped["tokens"][300], swapped["tokens"][301] = keys["tokens"][301], keys["tokens"][300]
    other = open_model(_write(tmp_path, values, "Q8_0", swapped))
    ref = open_model(files["BF16"])
    with pytest.raises(MisalignedError, match="row 300 is .* but .*do not align row for row"):
        check_aligned(ref, other)
    shorter = open_model(_write(tmp_path, values[:-1], "Q8_0", keys, "short.gguf"))
    with pytest.raises(MisalignedError, match="not one embedding at two precisions"):
        compare_files(ref, shorter)


@pytest.mark.parametrize("type_name", ["Q4_0", "Q5_1", "BF16"])
def test_row_pair_equals_the_simulated_matrix_row(files, type_name):
    model = open_model(files["BF16"])
    ref = of_model(model)
    whole = simulate(ref, type_name).decode_block(0, model.rows)
    pair = row_pair(ref, type_name, 123)
    np.testing.assert_array_equal(pair.ref, model.vectors([123])[0])
    np.testing.assert_array_equal(pair.other, whole[123])
    if type_name == "BF16":
        assert pair.blocks is None and pair.half_step is None
    else:
        assert pair.blocks.type_name == type_name and pair.half_step.shape == (model.dim,)
    stored = row_pair(ref, of_model(open_model(files["Q4_0"])), 7)
    assert stored.type_name == "Q4_0" and stored.blocks is not None
    np.testing.assert_array_equal(
        stored.other, decoded(np.asarray(open_model(files["Q4_0"]).matrix[7:8]), "Q4_0")[0]
    )


def test_dot_product_drift_and_the_captions_figures(files):
    """Drift by dot product finds numpy's exact dot top-10 at each precision; the captions'
    rank correlations and list sizes are the sample's own."""
    from explorer.core.quant import figures

    ref, other = open_model(files["Q8_0"]), open_model(files["Q4_0"])
    r = decoded(np.asarray(ref.matrix), "Q8_0").astype(np.float64)
    q = decoded(np.asarray(other.matrix), "Q4_0").astype(np.float64)
    report = compare_files(ref, other, sample=ref.rows, dot=True)
    drift = report.dot_drift
    assert drift is not None and drift.metric == "dot"
    for found, rows in ((drift.ref_top[:, :10], r), (drift.other_top[:, :10], q)):
        dot = rows @ rows.T
        np.fill_diagonal(dot, -np.inf)
        best = -np.sort(-dot, axis=1)[:, :10]
        np.testing.assert_allclose(np.take_along_axis(dot, found, axis=1), best, rtol=1e-5)
    a, b = drift.ref_top[:, :10].tolist(), drift.other_top[:, :10].tolist()
    kept = np.mean([len(set(x) & set(y)) for x, y in zip(a, b, strict=True)])
    assert report.summary()["top10_overlap_dot"]["mean"] == pytest.approx(kept / 10)
    # the captions' figures, against scipy-free numpy ranks of the same rows
    rel = np.linalg.norm(q - r, axis=1) / np.linalg.norm(r, axis=1)
    by_norm, by_shape, _small, _rest = figures.size_and_shape(report)
    rank = lambda v: np.argsort(np.argsort(v)).astype(float)  # noqa: E731
    want = np.corrcoef(rank(np.linalg.norm(r, axis=1)), rank(rel))[0, 1]
    assert by_norm == pytest.approx(want, abs=1e-4)  # rows of near-equal error may swap
    blocks = np.abs(r).reshape(len(r), -1, 32)
    peak = (blocks.max(axis=2) / np.sqrt((blocks**2).mean(axis=2))).mean(axis=1)
    assert by_shape == pytest.approx(np.corrcoef(rank(peak), rank(rel))[0, 1], abs=1e-4)
    text = figures.captions(report)[-1]
    assert f"{kept:.1f} of 10 dot-product" in text
    assert f"name {len(np.unique(drift.ref_top[:, :10])):,} different" in text
