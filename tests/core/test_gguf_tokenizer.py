"""Tokenizers built from GGUF metadata give the same ids as the tokenizer they were made from."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model
from tests.support.models import random_matrix, stored, write_gguf
from tests.support.tokenizers import TEXTS, byte_level_bpe, gguf_tokenizer_keys


def _write(tmp_path, rows: int, keys: dict):
    raw = stored(random_matrix(rows, 32), "Q8_0")
    return write_gguf(tmp_path / "t.gguf", {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)


@pytest.mark.parametrize(("digits", "pre_name"), [(True, "smollm"), (False, "gpt2")])
def test_byte_level_bpe_ids_equal_reference(tmp_path, digits, pre_name):
    ref = byte_level_bpe(digits)
    keys = gguf_tokenizer_keys(ref, pre_name)
    model = open_model(_write(tmp_path, len(keys["tokens"]), keys))
    assert model.tokenizer is not None
    assert "byte-level BPE" in model.info()["tokenizer_source"]
    for text in TEXTS:
        ours = [t.id for t in model.tokenizer.encode(text)]
        assert ours == ref.encode(text, add_special_tokens=False).ids, text
        # pieces' bytes put back together give the text again
        assert b"".join(t.bytes for t in model.tokenizer.encode(text)) == text.encode()
    assert model.tokenizer.find("<|im_end|>") == ref.token_to_id("<|im_end|>")


def test_unknown_pre_tokenizer_warns(tmp_path):
    keys = gguf_tokenizer_keys(byte_level_bpe(False), "some-new-model")
    model = open_model(_write(tmp_path, len(keys["tokens"]), keys))
    assert any("'some-new-model' is not known" in w for w in model.info()["warnings"])


def test_unsupported_tokenizer_model(tmp_path):
    keys = {"model": "t5-unigram", "tokens": ["a", "b"]}
    with pytest.raises(ModelFormatError, match="'t5-unigram' is not supported"):
        open_model(_write(tmp_path, 2, keys))
    assert open_model(tmp_path / "t.gguf", tokenizer=False).tokenizer is None


def test_sentencepiece_bpe_ids_equal_sentencepiece(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    prefix = tmp_path / "sp"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXTS * 10),
        model_prefix=str(prefix),
        vocab_size=400,
        model_type="bpe",
        byte_fallback=True,
        normalization_rule_name="identity",  # as Llama's tokenizer.model
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        character_coverage=1.0,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    n = sp.get_piece_size()

    def kind(i: int) -> int:
        if sp.is_unknown(i):
            return 2
        if sp.is_control(i):
            return 3
        if sp.is_byte(i):
            return 6
        return 5 if sp.is_unused(i) else 1

    keys = {
        "model": "llama",
        "tokens": [sp.id_to_piece(i) for i in range(n)],
        "scores": np.array([sp.get_score(i) for i in range(n)], np.float32),
        "token_type": [kind(i) for i in range(n)],
        "unknown_token_id": sp.unk_id(),
    }
    model = open_model(_write(tmp_path, n, keys))
    assert model.tokenizer is not None
    for text in TEXTS + ["unseen ☃ snowman ⛄"]:
        ours = [t.id for t in model.tokenizer.encode(text)]
        assert ours == sp.encode(text), text
