"""Row decoding, bit fields, statistics and small helpers of explorer.core.vectors."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from explorer.core.model.decode import decode_rows
from explorer.core.rows.bits import bit_fields
from explorer.core.rows.numbers import cosine_matrix, near_square, quantile, row_stats
from tests.support.models import NUMPY_DTYPES


@pytest.mark.parametrize(
    ("dtype", "value", "hex_", "sign", "exponent", "mantissa", "binary"),
    [
        ("BF16", 1.0, "0x3F80", 0, 127, 0, "0 01111111 0000000"),
        ("BF16", -2.5, "0xC020", 1, 128, 0b0100000, "1 10000000 0100000"),
        ("F16", 1.0, "0x3C00", 0, 15, 0, "0 01111 0000000000"),
        ("F16", -0.0, "0x8000", 1, 0, 0, "1 00000 0000000000"),
        ("F32", 0.15625, "0x3E200000", 0, 124, 1 << 21, "0 01111100 01000000000000000000000"),
        ("F64", 1.5, "0x3FF8000000000000", 0, 1023, 1 << 51, "0 01111111111 1" + "0" * 51),
        ("F8_E4M3", 448.0, "0x7E", 0, 15, 6, "0 1111 110"),
        ("F8_E4M3", -0.25, "0xA8", 1, 5, 0, "1 0101 000"),
        ("F8_E5M2", 1.5, "0x3E", 0, 15, 2, "0 01111 10"),
    ],
)
def test_bit_fields(dtype, value, hex_, sign, exponent, mantissa, binary):
    raw = np.array([value, value], dtype=NUMPY_DTYPES[dtype])
    bits = bit_fields(raw, dtype)
    assert len(bits) == 2
    b = bits[0]
    assert (b.hex, b.sign, b.exponent, b.mantissa, b.binary) == (
        hex_,
        sign,
        exponent,
        mantissa,
        binary,
    )


def test_bit_fields_of_a_memmap_row(tmp_path):
    arr = np.array([[1.0, 2.0], [3.0, -4.0]], dtype=ml_dtypes.bfloat16)
    path = tmp_path / "x.bin"
    arr.tofile(path)
    mm = np.memmap(path, mode="r", dtype=ml_dtypes.bfloat16, shape=(2, 2))
    assert [b.hex for b in bit_fields(mm[1], "BF16")] == ["0x4040", "0xC080"]


@pytest.mark.parametrize("dtype", ["F16", "BF16", "F8_E4M3", "F8_E5M2", "F32"])
def test_decode_rows_is_exact(dtype):
    rng = np.random.default_rng(0)
    raw = (rng.standard_normal((4, 33)) * 3).astype(NUMPY_DTYPES[dtype])
    out = decode_rows(raw)
    assert out.dtype == np.float32 and out.shape == (4, 33)
    # exact: going back to the stored dtype gives the same bits
    assert out.astype(NUMPY_DTYPES[dtype]).tobytes() == raw.tobytes()


def test_decode_rows_f64_keeps_precision():
    raw = np.array([[1 + 2**-40, 1e-300]], dtype=np.float64)
    out = decode_rows(raw)
    assert out.dtype == np.float64 and out.tolist() == raw.tolist()
    out[0, 0] = 5  # a copy, never a view of the stored data
    assert raw[0, 0] != 5


def test_row_stats():
    values = np.array([3.0, -4.0, 0.0, 1.0], dtype=np.float32)
    s = row_stats(values)
    assert s.norm == pytest.approx(math.sqrt(26))
    assert s.mean == pytest.approx(0.0)
    assert s.std == pytest.approx(math.sqrt((9 + 16 + 0 + 1) / 4))
    assert (s.min, s.max, s.argmax_abs, s.finite) == (-4.0, 3.0, 1, True)
    assert set(s.as_dict()) == {"norm", "mean", "std", "min", "max", "argmax_abs", "finite"}


def test_row_stats_non_finite_and_empty():
    s = row_stats(np.array([1.0, np.inf, -2.0]))
    assert not s.finite and s.argmax_abs == 1
    s = row_stats(np.array([np.nan, -2.0]))
    assert not s.finite and s.argmax_abs == 1
    s = row_stats(np.array([np.nan, np.nan]))
    assert s.argmax_abs == -1
    assert row_stats(np.array([])).argmax_abs == -1


def test_cosine_matrix():
    v = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [0.0, 0.0]], dtype=np.float32)
    c = cosine_matrix(v)
    assert c.shape == (4, 4)
    assert c[0, 0] == pytest.approx(1.0) and c[0, 1] == pytest.approx(0.0)
    assert c[0, 2] == pytest.approx(-1.0)
    assert np.all(c[3] == 0)  # zero rows give 0, not NaN
    assert np.allclose(c, c.T)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 384, 576, 768, 1000, 4096, 4097, 5120])
def test_near_square(n):
    rows, cols = near_square(n)
    assert rows * cols >= n
    assert rows * cols - n < cols  # no wasted full row
    assert max(rows, cols) <= 2 * min(rows, cols) + 1 or n < 4


@pytest.mark.parametrize("n", [384, 576, 768, 2048, 4096, 5120])
def test_near_square_fills_common_dims_exactly(n):
    rows, cols = near_square(n)
    assert rows * cols == n
    assert near_square(4096) == (64, 64)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_quantile_from_one_partition_equals_numpy(dtype):
    rng = np.random.default_rng(5)
    for trial in range(300):
        values = np.abs(rng.normal(size=int(rng.integers(1, 2000)))).astype(dtype)
        if trial % 3 == 0:
            values = np.round(values, 1)  # ties
        for q in (0.0, 0.5, 0.999, 1.0, float(rng.random())):
            assert quantile(values, q) == float(np.quantile(values, q)), (trial, q)
    with pytest.raises(ValueError):
        quantile(np.zeros(0, dtype=dtype), 0.5)
