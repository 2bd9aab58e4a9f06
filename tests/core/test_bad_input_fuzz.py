"""Issue 11, fuzzers: the safetensors header parser, the config/index JSON readers and the
tokenizer loader on generated malformed input. Each either succeeds or raises one ExplorerError
subclass; nothing else escapes, and our header verdict matches the reference library's."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import safetensors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError, ModelFormatError, TokenError
from explorer.core.model.dtypes import ITEMSIZES
from explorer.core.model.formats.safetensors import SafetensorsFile
from explorer.core.model.open import open_model
from explorer.core.tokenizer.tokens import TokenizerInfo
from tests.support.models import write_model
from tests.support.tokenizers import make_wordpiece_tokenizer

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

ints = st.one_of(
    st.integers(0, 64), st.integers(-3, 2**64 + 3), st.sampled_from([2**62, 2**63, 2**64 - 1])
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def headers(draw):
    """A header that is often valid, or nearly: tensors laid out in order, then perturbed."""
    header: dict[str, object] = {}
    offset = 0
    for i in range(draw(st.integers(0, 4))):
        dtype = draw(st.sampled_from([*ITEMSIZES, "F12", "f32"]))
        shape = draw(st.lists(st.integers(0, 6), max_size=3))
        itemsize = ITEMSIZES.get(dtype, 4)
        nbytes = int(np.prod(shape, dtype=np.int64)) * itemsize
        entry: dict[str, object] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
        if draw(st.integers(0, 5)) == 0:  # break one field
            key = draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
            entry[key] = draw(st.one_of(json_values, st.lists(ints, max_size=3)))
        header[draw(st.text(min_size=1, max_size=6)) + str(i)] = entry
    if draw(st.booleans()):
        header["__metadata__"] = draw(
            st.dictionaries(st.text(max_size=4), st.text(max_size=4) | st.integers(), max_size=2)
        )
    return header, offset


def _file(header: dict, data_len: int, len_delta: int, pad: int) -> bytes:
    raw = json.dumps(header).encode() + b" " * pad
    return struct.pack("<Q", max(0, len(raw) + len_delta)) + raw + bytes(max(0, data_len))


def _reference_accepts(path: Path) -> bool:
    try:
        with safetensors.safe_open(str(path), framework="numpy"):
            return True
    except Exception:  # any refusal
        return False


@FUZZ
@given(headers(), st.integers(-2, 2), st.sampled_from([0, 0, 0, -1, 1]), st.integers(0, 9))
def test_header_fuzz_agrees_with_the_reference(tmp_path, made, data_delta, len_delta, pad):
    header, data_len = made
    path = tmp_path / "f.safetensors"
    path.write_bytes(_file(header, data_len + data_delta, len_delta, pad))
    try:
        f = SafetensorsFile(path)
    except ModelFormatError as e:
        assert "\n" not in str(e) and len(str(e)) < 400
        ours = False
    else:
        ours = True
        for name, info in f.tensors.items():  # every accepted tensor can be read in full
            if info.dtype in ITEMSIZES:
                np.asarray(f.array(name)).tobytes()
        f.close()
    assert ours == _reference_accepts(path)


@FUZZ
@given(st.binary(max_size=64), st.integers(0, 2**64 - 1) | st.integers(0, 80))
def test_header_fuzz_raw_bytes(tmp_path, body, declared):
    path = tmp_path / "f.safetensors"
    path.write_bytes(struct.pack("<Q", declared) + body)
    try:
        SafetensorsFile(path).close()
    except ModelFormatError:
        pass


@pytest.fixture(scope="module")
def tokenizer_spec(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    make_wordpiece_tokenizer(path, vocab_size=120)
    return json.loads(path.read_text())


@FUZZ
@given(
    st.sampled_from(["config.json", "model.safetensors.index.json"]),
    st.one_of(json_values.map(lambda v: json.dumps(v).encode()), st.binary(max_size=40)),
)
def test_config_and_index_fuzz(tmp_path, name, body):
    folder = tmp_path / "m"
    if not (folder / "model.safetensors").exists():
        write_model(folder, rows=8, dim=4)
    (folder / name).write_bytes(body)
    try:
        model = open_model(folder)
    except ExplorerError as e:
        assert "\n" not in str(e)
    else:
        assert model.info()["rows"] == 8
    finally:
        (folder / name).unlink()


def _mutate(spec: dict, data) -> dict:
    spec = json.loads(json.dumps(spec))
    where = data.draw(st.sampled_from(["model", "vocab", "added", "normalizer", "pre", "top"]))
    if where == "vocab":
        vocab = spec["model"]["vocab"]
        key = data.draw(st.sampled_from(sorted(vocab)))
        vocab[key] = data.draw(st.one_of(ints, json_values))
    elif where == "model":
        key = data.draw(st.sampled_from(sorted(spec["model"])))
        spec["model"][key] = data.draw(json_values)
    elif where == "added":
        spec["added_tokens"].append(
            {
                "id": data.draw(ints),
                "content": data.draw(st.text(max_size=5)),
                "special": True,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
            }
        )
    elif where == "normalizer":
        spec["normalizer"] = data.draw(json_values)
    elif where == "pre":
        spec["pre_tokenizer"] = data.draw(json_values)
    else:
        spec[data.draw(st.sampled_from(sorted(spec)))] = data.draw(json_values)
    return spec


@FUZZ
@given(data=st.data(), text=st.text(min_size=0, max_size=20))
def test_tokenizer_loader_fuzz(tmp_path, tokenizer_spec, data, text):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_mutate(tokenizer_spec, data)))
    try:
        info = TokenizerInfo.from_file(path, rows=data.draw(st.integers(1, 500)))
    except ModelFormatError as e:
        assert "\n" not in str(e)
        return
    assert len(info.pieces) == info.rows  # tables sized by the matrix, whatever the ids say
    assert len(info.labels) == info.rows
    for call in (lambda: info.encode(text), lambda: info.find(text)):
        try:
            call()
        except TokenError as e:
            assert "\n" not in str(e)
