"""Issue 11, files: every malformed or special model file is one ModelFormatError, never a hang,
a traceback or memory sized by a number the file merely declares."""

from __future__ import annotations

import json
import os
import struct
import threading

import numpy as np
import pytest
import safetensors
from tokenizers import Tokenizer, models, pre_tokenizers

from explorer.core.errors import ModelFormatError, TokenError
from explorer.core.limits import MAX_JSON_BYTES
from explorer.core.model.formats.jsonfile import load_json
from explorer.core.model.formats.safetensors import SafetensorsFile
from explorer.core.model.open import open_model
from tests.support.models import raw_safetensors, safetensors_bytes, write_model


def finishes(fn, seconds: float = 60.0):
    """Run fn in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as e:  # handed back to the test
            box["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn} blocked for {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- special files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["file", "folder", "index"])
def test_fifo_is_refused_without_blocking(tmp_path, where):
    if where == "file":
        target = tmp_path / "model.safetensors"
        os.mkfifo(target)
        path = target
    elif where == "folder":
        os.mkfifo(tmp_path / "model.safetensors")
        path = tmp_path
    else:
        target = tmp_path / "model.safetensors.index.json"
        os.mkfifo(target)
        path = target
    with pytest.raises(ModelFormatError, match="FIFO"):
        finishes(lambda: open_model(path))


def test_fifo_side_files_are_ignored_or_refused(tmp_path):
    write_model(tmp_path, rows=16, dim=4)
    os.mkfifo(tmp_path / "config.json")
    os.mkfifo(tmp_path / "tokenizer.json")
    model = finishes(lambda: open_model(tmp_path))
    assert model.tokenizer is None and model.config == {}
    with pytest.raises(ModelFormatError, match="FIFO"):
        finishes(lambda: load_json(tmp_path / "config.json", "config"))


def test_device_is_refused(tmp_path):
    link = tmp_path / "null.safetensors"
    link.symlink_to("/dev/null")
    with pytest.raises(ModelFormatError, match="character device"):
        finishes(lambda: SafetensorsFile(link))


# -- the reference library's coverage rules --------------------------------------------------------


def _reference_accepts(path) -> bool:
    try:
        with safetensors.safe_open(str(path), framework="numpy"):
            return True
    except Exception:  # any refusal
        return False


def test_header_one_byte_short_is_refused_like_the_reference(tmp_path):
    data = np.arange(8, dtype=np.float32).tobytes()
    good = safetensors_bytes({"e": ("F32", [2, 4], data)})
    (n,) = struct.unpack("<Q", good[:8])
    path = tmp_path / "short.safetensors"
    path.write_bytes(struct.pack("<Q", n - 1) + good[8:])
    assert json.loads(good[8 : 8 + n - 1])  # still valid JSON: only coverage shows the fault
    assert not _reference_accepts(path)
    with pytest.raises(ModelFormatError, match="belong to no tensor"):
        SafetensorsFile(path)


@pytest.mark.parametrize(
    "offsets,extra,fragment",
    [([[0, 16], [20, 36]], 4, "before tensor"), ([[0, 16], [16, 32]], 4, "after the last")],
)
def test_gaps_and_trailing_bytes_are_refused(tmp_path, offsets, extra, fragment):
    header = {
        name: {"dtype": "F32", "shape": [4], "data_offsets": o}
        for name, o in zip(("a", "b"), offsets, strict=True)
    }
    path = tmp_path / "x.safetensors"
    path.write_bytes(raw_safetensors(header, bytes(32 + extra)))
    assert not _reference_accepts(path)
    with pytest.raises(ModelFormatError, match=fragment):
        SafetensorsFile(path)


def test_what_the_reference_refuses_beyond_our_rules_is_refused(tmp_path):
    # metadata values must be strings for the reference library
    header = {"__metadata__": {"n": 1}, "e": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
    path = tmp_path / "meta.safetensors"
    path.write_bytes(raw_safetensors(header, bytes(4)))
    assert not _reference_accepts(path)
    with pytest.raises(ModelFormatError, match="safetensors library"):
        SafetensorsFile(path)


# -- absurd declared sizes -------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [[100_000_000, 0], [2**62, 0], [10, 0], [2**40, 0], [0, 4]])
def test_empty_embedding_is_refused(tmp_path, shape):
    path = tmp_path / "e.safetensors"
    header = {"model.embed_tokens.weight": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]}}
    path.write_bytes(raw_safetensors(header))
    with pytest.raises(ModelFormatError, match="holds no data"):
        finishes(lambda: open_model(path), 30)


def test_tokenizer_with_a_huge_id_gets_tables_sized_by_the_matrix(tmp_path):
    write_model(tmp_path, rows=64, dim=4)
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    spec = json.loads(tok.to_str())
    for big in (300_000_000, 4_000_000_000):
        # written by hand: the library's own save() walks every id up to the largest
        spec["model"]["vocab"]["b"] = big
        (tmp_path / "tokenizer.json").write_text(json.dumps(spec))
        model = open_model(tmp_path)
        assert len(model.tokenizer.pieces) == model.rows == 64
        assert model.unused_rows == 62
        assert model.info()["rows"] == 64
        with pytest.raises(TokenError, match="out of range"):
            model.check_id(model.tokenizer.find("b"))


# -- JSON side files -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["config.json", "model.safetensors.index.json"])
@pytest.mark.parametrize(
    "body,fragment",
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"vocab_size": ' + "9" * 5000 + "}", "valid JSON"),
        ("\xff{", "valid JSON"),
    ],
    ids=["nested", "5000 digits", "not utf-8"],
)
def test_json_side_files(tmp_path, name, body, fragment):
    write_model(tmp_path, rows=8, dim=4)
    (tmp_path / name).write_bytes(body.encode("latin-1") if "\xff" in body else body.encode())
    with pytest.raises(ModelFormatError, match=fragment) as e:
        open_model(tmp_path)
    assert len(str(e.value)) < 250


def test_json_side_file_size_is_capped(tmp_path):
    path = tmp_path / "config.json"
    with open(path, "wb") as f:
        f.truncate(MAX_JSON_BYTES + 1)  # sparse: no disk used
    with pytest.raises(ModelFormatError, match="limit"):
        load_json(path, "config")


# -- 0-byte tensors beside a real embedding --------------------------------------------------------


def test_zero_byte_side_tensor_is_harmless(tmp_path):
    matrix = np.ones((8, 4), np.float32)
    path = tmp_path / "m.safetensors"
    path.write_bytes(
        safetensors_bytes(
            {
                "empty": ("F32", [2**62, 0], b""),
                "model.embed_tokens.weight": ("F32", [8, 4], matrix.tobytes()),
            }
        )
    )
    model = open_model(path)
    assert (model.rows, model.dim) == (8, 4)
    assert model.info()["rows"] == 8
