"""load_tokenizer: the model's tokenizer alone, the same one open_model attaches."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model
from explorer.core.model.tokenizer import load_tokenizer
from tests.support.models import random_matrix, stored, write_gguf, write_model
from tests.support.tokenizers import CORPUS, byte_level_bpe, gguf_tokenizer_keys


def _ids(tok, text: str) -> list[int]:
    return [t.id for t in tok.encode(text)]


@pytest.mark.parametrize("sharded", [False, True])
def test_folder_tokenizer_matches_open_model_and_is_bounded_by_the_rows(tmp_path, sharded):
    write_model(tmp_path, rows=420, dim=8, tokenizer="bpe", sharded=sharded)  # 20 padding rows
    opened = open_model(tmp_path)
    tok, warnings = load_tokenizer(tmp_path)  # rows read from the headers
    assert tok is not None and warnings == opened.tokenizer_warnings
    assert tok.rows == 420 and tok.pieces == opened.tokenizer.pieces
    for text in CORPUS[:5]:
        assert _ids(tok, text) == _ids(opened.tokenizer, text)
    given, _ = load_tokenizer(tmp_path, rows=opened.rows)
    assert given is not None and given.pieces == tok.pieces


def test_tensor_choice_sets_the_row_bound(tmp_path):
    write_model(tmp_path, rows=420, tokenizer="bpe", extra={"wte.weight": random_matrix(450, 8)})
    tok, _ = load_tokenizer(tmp_path, tensor="wte.weight")
    assert tok is not None and tok.rows == 450 and len(tok.pieces) == 450
    assert tok.pieces == open_model(tmp_path, tensor="wte.weight").tokenizer.pieces


def test_gguf_tokenizer_matches_open_model(tmp_path):
    ref = byte_level_bpe(digits=True)
    keys = gguf_tokenizer_keys(ref, "smollm")
    rows = len(keys["tokens"]) + 8
    raw = stored(random_matrix(rows, 32), "Q8_0")
    path = write_gguf(tmp_path / "t.gguf", {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)
    opened = open_model(path)
    tok, warnings = load_tokenizer(path)
    assert tok is not None and tok.rows == rows and warnings == opened.tokenizer_warnings
    assert tok.pieces == opened.tokenizer.pieces
    text = "1234 café <|im_end|> 日本"
    assert _ids(tok, text) == _ids(opened.tokenizer, text) == ref.encode(text).ids
    with pytest.raises(ModelFormatError, match="no tensor named 'nope'"):
        load_tokenizer(path, tensor="nope")


def test_no_tokenizer_and_bad_paths(tmp_path):
    write_model(tmp_path / "bare")
    assert load_tokenizer(tmp_path / "bare") == (None, [])
    assert load_tokenizer(tmp_path / "bare", rows=64) == (None, [])
    with pytest.raises(ModelFormatError, match="no such file"):
        load_tokenizer(tmp_path / "missing")
    (tmp_path / "model.bin").write_bytes(np.zeros(4).tobytes())  # a .bin, but no pickle
    with pytest.raises(ModelFormatError, match="not a model file"):
        load_tokenizer(tmp_path / "model.bin")
