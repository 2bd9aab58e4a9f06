"""The safetensors reader: exact decoding of every float dtype, validation of malformed files."""

from __future__ import annotations

import hashlib
import json
import math
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError, ModelFormatError
from explorer.core.model.decode import decode_rows
from explorer.core.model.dtypes import is_bf16
from explorer.core.model.formats.safetensors import (
    MAX_HEADER_BYTES,
    SafetensorsFile,
    write_safetensors,
)
from explorer.core.model.open import open_model
from tests.support.models import raw_safetensors, safetensors_bytes, write_model

# (bytes per value, exponent bits, mantissa bits, bias, kind of the all-ones exponent)
LAYOUTS = {
    "F64": (8, 11, 52, 1023, "ieee"),
    "F32": (4, 8, 23, 127, "ieee"),
    "F16": (2, 5, 10, 15, "ieee"),
    "BF16": (2, 8, 7, 127, "ieee"),
    "F8_E4M3": (1, 4, 3, 7, "fn"),  # no infinities; only S.1111.111 is NaN
    "F8_E5M2": (1, 5, 2, 15, "ieee"),
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def reference_decode(words: np.ndarray, dtype: str) -> np.ndarray:
    """Decode raw bit patterns by hand (integer ops and ldexp), independent of ml_dtypes."""
    size, e_bits, m_bits, bias, kind = LAYOUTS[dtype]
    w = words.astype(np.uint64)
    sign = (w >> np.uint64(size * 8 - 1)).astype(np.int64)
    exp = ((w >> np.uint64(m_bits)) & np.uint64((1 << e_bits) - 1)).astype(np.int64)
    man = w & np.uint64((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    out = np.empty(w.shape, dtype=np.float64)
    normal = (exp > 0) & (exp < top) if kind == "ieee" else exp > 0
    sub = exp == 0
    # m + 2^M and m are exact in float64 because M <= 52
    out[normal] = np.ldexp(
        (man[normal] | np.uint64(1 << m_bits)).astype(np.float64),
        (exp[normal] - bias - m_bits).astype(np.int32),
    )
    out[sub] = np.ldexp(
        man[sub].astype(np.float64), np.full(sub.sum(), 1 - bias - m_bits, np.int32)
    )
    if kind == "ieee":
        special = exp == top
        out[special & (man == 0)] = np.inf
        out[special & (man != 0)] = np.nan
    else:
        out[(exp == top) & (man == (1 << m_bits) - 1)] = np.nan
    return np.where(sign == 1, -out, out)


def bit_patterns(dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Every pattern for 8/16-bit types; for F32/F64 random ones plus zero, subnormal, inf, NaN."""
    size = LAYOUTS[dtype][0]
    if size <= 2:
        return np.arange(1 << (8 * size), dtype=UINT[size])
    info = np.finfo(np.float32 if size == 4 else np.float64)
    specials = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -2.5,
            np.inf,
            -np.inf,
            np.nan,
            info.tiny,
            info.tiny / 8,
            -info.smallest_subnormal,
            info.max,
            -info.max,
        ],
        dtype=info.dtype,
    )
    rand = rng.integers(0, np.iinfo(UINT[size]).max, size=4084, dtype=UINT[size], endpoint=True)
    return np.concatenate([specials.view(UINT[size]), rand])


@pytest.mark.parametrize("dtype", list(LAYOUTS))
def test_every_dtype_decodes_exactly(tmp_path, dtype):
    words = bit_patterns(dtype, np.random.default_rng(1))
    dim = 64
    matrix_bytes = words.tobytes()
    rows = len(words) // dim
    path = tmp_path / "m.safetensors"
    path.write_bytes(safetensors_bytes({"embed_tokens.weight": (dtype, [rows, dim], matrix_bytes)}))
    model = open_model(path)
    assert (model.dtype, model.rows, model.dim) == (dtype, rows, dim)
    ids = np.arange(rows)
    got = model.vectors(ids)
    assert got.dtype == (np.float64 if dtype == "F64" else np.float32)
    want = reference_decode(words, dtype).reshape(rows, dim)
    with np.errstate(invalid="ignore"):  # signalling NaNs
        got64 = got.astype(np.float64)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got64), nan)
    assert np.array_equal(got64[~nan], want[~nan])
    assert np.array_equal(np.signbit(got64[~nan]), np.signbit(want[~nan]))  # -0.0 stays -0.0
    # the raw stored bits come back untouched, and one row at a time agrees with the batch
    raw = model.raw_rows(ids)
    assert raw.tobytes() == matrix_bytes
    k = rows // 2
    assert np.array_equal(model.vector(k), got[k], equal_nan=True)
    model.close()


def test_reference_decoder_is_not_trivial():
    """The hand decoder knows the textbook values (so the comparison above can fail)."""
    assert reference_decode(np.array([0x3F80, 0xC000, 0x0001], np.uint16), "BF16").tolist() == [
        1.0,
        -2.0,
        2.0**-133,
    ]
    assert reference_decode(np.array([0x7E, 0x7F, 0x01], np.uint8), "F8_E4M3")[0] == 448.0
    assert math.isnan(reference_decode(np.array([0x7F], np.uint8), "F8_E4M3")[0])
    assert reference_decode(np.array([0x7B, 0x7C], np.uint8), "F8_E5M2").tolist() == [
        57344.0,
        np.inf,
    ]
    assert reference_decode(np.array([0x3C00, 0x0001], np.uint16), "F16").tolist() == [
        1.0,
        2.0**-24,
    ]


def test_only_requested_rows_are_decoded_and_matrix_is_read_only(tmp_path):
    matrix = write_model(tmp_path, rows=50, dim=4, dtype="BF16")
    model = open_model(tmp_path)
    assert isinstance(model.matrix, np.memmap)
    assert is_bf16(model.matrix.dtype) and model.matrix.dtype.itemsize == 2
    assert not model.matrix.flags.writeable
    with pytest.raises(ValueError):
        model.matrix[0, 0] = 1
    got = model.vectors([3, 49, 3])
    assert np.array_equal(got, matrix[[3, 49, 3]].astype(np.float32))


def test_files_are_never_modified(tmp_path):
    write_model(tmp_path, rows=40, dim=8, dtype="F16", tokenizer="bpe", config={"vocab_size": 40})
    files = sorted(p for p in tmp_path.iterdir())
    before = {p: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files}
    model = open_model(tmp_path)
    model.vectors(np.arange(40))
    model.tokenizer.encode("the cat 🐱")
    _ = model.tokenizer.labels
    model.close()
    after = {p: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files}
    assert after == before
    assert sorted(tmp_path.iterdir()) == files  # nothing written beside the model either


def test_metadata_and_empty_tensor(tmp_path):
    path = tmp_path / "m.safetensors"
    path.write_bytes(
        safetensors_bytes(
            {
                "empty": ("F32", [0, 4], b""),
                "w": ("F32", [2, 2], np.arange(4, dtype="<f4").tobytes()),
            },
            metadata={"format": "pt"},
        )
    )
    f = SafetensorsFile(path)
    assert f.metadata == {"format": "pt"}
    assert f.array("empty").shape == (0, 4)
    assert f.array("w").tolist() == [[0, 1], [2, 3]]
    f.close()


def test_write_safetensors_round_trip(tmp_path):
    arrays = {
        "bf16": np.array([[1.5, -2.0]], dtype=ml_dtypes.bfloat16),
        "f8": np.array([0.5, 448], dtype=ml_dtypes.float8_e4m3fn),
        "big_endian": np.array([1.25, -3.0], dtype=">f4"),
        "i": np.arange(3, dtype=np.int64),
    }
    path = tmp_path / "w.safetensors"
    write_safetensors(path, arrays)
    f = SafetensorsFile(path)
    assert {n: t.dtype for n, t in f.tensors.items()} == {
        "bf16": "BF16",
        "f8": "F8_E4M3",
        "big_endian": "F32",
        "i": "I64",
    }
    for name, arr in arrays.items():
        assert (
            f.array(name).tobytes()
            == np.ascontiguousarray(arr, arr.dtype.newbyteorder("<")).tobytes()
        )
    assert decode_rows(f.array("bf16")).tolist() == [[1.5, -2.0]]
    # the header is 8-byte aligned as the reference writer does
    (n,) = struct.unpack("<Q", path.read_bytes()[:8])
    assert n % 8 == 0
    f.close()


# -- malformed files -------------------------------------------------------------------------------

GOOD = {"w": ("F32", [2, 3], bytes(24))}


def _header(**entry):
    base = {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    base.update(entry)
    return {"w": base}


MALFORMED = {
    "empty file": (b"", "too short"),
    "seven bytes": (b"\x01" * 7, "too short"),
    "absurd header length": (raw_safetensors({}, bytes(64), header_len=2**40), "exceeds file size"),
    "header longer than file": (
        raw_safetensors(_header(), bytes(24), header_len=4096),
        "exceeds file size",
    ),
    "header not JSON": (raw_safetensors(b"{not json at all", bytes(8)), "not valid JSON"),
    "header not UTF-8": (raw_safetensors(b"\xff\xfe{}", bytes(8)), "not valid JSON"),
    "header a list": (raw_safetensors([1, 2], bytes(8)), "not a JSON object"),
    "deeply nested": (raw_safetensors(b"[" * 100000, b""), "not valid JSON"),
    "unknown dtype": (raw_safetensors(_header(dtype="F4"), bytes(24)), "unknown dtype 'F4'"),
    "dtype not a string": (raw_safetensors(_header(dtype=["F32"]), bytes(24)), "unknown dtype"),
    "shape not a list": (raw_safetensors(_header(shape="2x3"), bytes(24)), "shape"),
    "negative shape": (raw_safetensors(_header(shape=[-2, -3]), bytes(24)), "shape"),
    "float shape": (raw_safetensors(_header(shape=[2.0, 3]), bytes(24)), "shape"),
    "shape x itemsize != span": (
        raw_safetensors(_header(shape=[2, 2]), bytes(24)),
        "needs 16 bytes",
    ),
    "offsets reversed": (raw_safetensors(_header(data_offsets=[24, 0]), bytes(24)), "data_offsets"),
    "offsets missing": (raw_safetensors(_header(data_offsets=None), bytes(24)), "data_offsets"),
    "offsets beyond file": (raw_safetensors(_header(data_offsets=[8, 32]), bytes(24)), "truncated"),
    "entry not an object": (raw_safetensors({"w": [1, 2]}, bytes(24)), "not an object"),
    "overlapping tensors": (
        raw_safetensors(
            {
                "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
            },
            bytes(24),
        ),
        "overlap",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_raise_model_format_error(tmp_path, case):
    data, fragment = MALFORMED[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError) as err:
        SafetensorsFile(path)
    message = str(err.value)
    assert fragment in message
    assert message.startswith("bad.safetensors")  # says which file
    assert "\n" not in message
    with pytest.raises(ModelFormatError):
        open_model(path)


def test_truncated_file(tmp_path):
    good = safetensors_bytes({"embed_tokens.weight": ("F32", [10, 4], bytes(160))})
    for cut in (4, 20, len(good) - 1):
        path = tmp_path / f"cut{cut}.safetensors"
        path.write_bytes(good[:cut])
        with pytest.raises(ModelFormatError, match=f"cut{cut}.safetensors"):
            open_model(path)


def test_header_over_cap_is_refused(tmp_path):
    path = tmp_path / "huge.safetensors"
    with open(path, "wb") as f:  # sparse file: header length fits the file but exceeds the cap
        f.write(struct.pack("<Q", MAX_HEADER_BYTES + 8))
        f.truncate(MAX_HEADER_BYTES + 64)
    with pytest.raises(ModelFormatError, match="cap"):
        SafetensorsFile(path)


def test_unreadable_path(tmp_path):
    with pytest.raises(ModelFormatError, match="cannot read"):
        SafetensorsFile(tmp_path)  # a folder, not a file


# -- fuzzing ---------------------------------------------------------------------------------


def _check_random_file(path, data: bytes) -> None:
    path.write_bytes(data)
    try:
        f = SafetensorsFile(path)
    except ModelFormatError as e:
        assert "\n" not in str(e)
        return
    for name in f.tensors:  # whatever was accepted can be mapped and read
        np.asarray(f.array(name)).tobytes()
    f.close()


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.binary(max_size=200),
    data=st.binary(max_size=64),
    length=st.none() | st.integers(0, 2**64 - 1) | st.integers(0, 300),
)
def test_random_header_bytes_only_raise_model_format_error(tmp_path, header, data, length):
    prefix = struct.pack("<Q", len(header) if length is None else length)
    _check_random_file(tmp_path / "fuzz.safetensors", prefix + header + data)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_entries = st.fixed_dictionaries(
    {},
    optional={
        "dtype": st.sampled_from(["F32", "BF16", "F8_E5M2", "I8", "BOOL", "Q4", "f32"])
        | _json_values,
        "shape": st.lists(st.integers(-2, 40), max_size=3) | _json_values,
        "data_offsets": st.lists(st.integers(-4, 80), min_size=0, max_size=3) | _json_values,
    },
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.dictionaries(st.text(max_size=6), _entries | _json_values, max_size=4),
    data_len=st.integers(0, 64),
)
def test_random_json_headers_only_raise_model_format_error(tmp_path, header, data_len):
    raw = json.dumps(header).encode("utf-8")
    _check_random_file(
        tmp_path / "fuzz.safetensors", struct.pack("<Q", len(raw)) + raw + bytes(data_len)
    )


def test_fuzz_helper_accepts_a_good_file(tmp_path):
    path = tmp_path / "ok.safetensors"
    _check_random_file(path, safetensors_bytes(GOOD))
    assert SafetensorsFile(path).tensors["w"].shape == (2, 3)


_model_entries = st.fixed_dictionaries(
    {
        "dtype": st.sampled_from(["F32", "BF16", "F16", "F8_E4M3", "I32", "U8", "BOOL", "F64"]),
        "shape": st.lists(st.integers(0, 6), max_size=3),
        "data_offsets": st.lists(st.integers(0, 300), min_size=2, max_size=2).map(sorted),
    }
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=st.dictionaries(
        st.sampled_from(["embed_tokens.weight", "lm_head.weight", "wte.weight", "x", "y"]),
        _model_entries,
        max_size=3,
    ),
    data_len=st.integers(0, 300),
    vocab_size=st.none() | st.integers(0, 6),
)
def test_open_model_on_random_headers_only_raises_explorer_errors(
    tmp_path, header, data_len, vocab_size
):
    """Whatever a header holds, opening and reading a row never fails with anything else."""
    for f in tmp_path.iterdir():
        f.unlink()
    raw = json.dumps(header).encode("utf-8")
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(data_len))
    if vocab_size is not None:
        (tmp_path / "config.json").write_text(json.dumps({"vocab_size": vocab_size}))
    try:
        model = open_model(tmp_path)
    except ModelFormatError:
        return
    assert model.matrix.shape == (model.rows, model.dim)
    if model.rows:
        assert model.vectors([0, model.rows - 1]).shape == (2, model.dim)
    with pytest.raises(ExplorerError):
        model.vector(model.rows)
    model.info()
    model.close()


def test_hostile_header_gives_a_short_message(tmp_path):
    path = tmp_path / "hostile.safetensors"
    header = {"x" * 100_000: {"dtype": ["F32"] * 10_000, "shape": [1], "data_offsets": [0, 4]}}
    path.write_bytes(raw_safetensors(header, bytes(4)))
    with pytest.raises(ModelFormatError, match="unknown dtype") as err:
        SafetensorsFile(path)
    assert len(str(err.value)) < 300
    path.write_bytes(raw_safetensors(_header(shape=[2**62, 2**62, 2**62]), bytes(24)))
    with pytest.raises(ModelFormatError, match="needs") as err:
        SafetensorsFile(path)
    assert len(str(err.value)) < 300
