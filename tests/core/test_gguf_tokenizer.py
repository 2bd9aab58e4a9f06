"""Tokenizers built from GGUF metadata give the same ids as the tokenizer they were made from."""

from __future__ import annotations

import json

import numpy as np
import pytest
from core.fixtures import CORPUS
from core.gguf_fixtures import random_values, stored, write_gguf
from tokenizers import Tokenizer, decoders, models, trainers
from tokenizers import pre_tokenizers as pre

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model

# whitespace runs, tabs, newlines, digits, accents, CJK, emoji, code, special tokens
TEXTS = [
    *CORPUS,
    "  two  spaces   three\t\ttabs\n\nnewlines\r\n   ",
    "1234567 + 89 = 1234656; 3.14159, 1e-9, ½ ²",
    "café naïve résumé Ærøskøbing Straße",
    "日本語のテキストと中文 한국어",
    "emoji 🐱🐶👩‍👩‍👧 ❤️ 🙂🙂",
    "def f(x):\n    return x**2  # comment\n\tif a != b: pass",
    "<|im_start|>user\nHello<|im_end|>",
    "it's they're I'm we'll you'd",
]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _byte_level_reference(digits: bool) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    steps = [pre.ByteLevel(add_prefix_space=False)]
    if digits:
        steps.insert(0, pre.Digits(individual_digits=True))
    tok.pre_tokenizer = pre.Sequence(steps)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=pre.ByteLevel.alphabet(),
        special_tokens=SPECIALS,
        show_progress=False,
    )
    tok.train_from_iterator(TEXTS * 10, trainer)
    return tok


def _gguf_tokenizer_keys(tok: Tokenizer, pre_name: str) -> dict:
    spec = json.loads(tok.to_str())
    vocab = tok.get_vocab(with_added_tokens=True)
    tokens = [None] * len(vocab)
    for piece, i in vocab.items():
        tokens[i] = piece
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    return {
        "model": "gpt2",
        "pre": pre_name,
        "tokens": tokens,
        "merges": merges,
        "token_type": [3 if t in SPECIALS else 1 for t in tokens],
    }


def _write(tmp_path, rows: int, keys: dict):
    raw = stored(random_values(rows, 32), "Q8_0")
    return write_gguf(tmp_path / "t.gguf", {"token_embd.weight": (raw, "Q8_0")}, tokenizer=keys)


@pytest.mark.parametrize(("digits", "pre_name"), [(True, "smollm"), (False, "gpt2")])
def test_byte_level_bpe_ids_equal_reference(tmp_path, digits, pre_name):
    ref = _byte_level_reference(digits)
    keys = _gguf_tokenizer_keys(ref, pre_name)
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
    keys = _gguf_tokenizer_keys(_byte_level_reference(False), "some-new-model")
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
