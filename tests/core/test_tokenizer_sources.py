"""Folders without tokenizer.json: a real tokenizer is built from vocab.json + merges.txt or
vocab.txt, and tokenizes like the reference tokenizer those files were saved from."""

from __future__ import annotations

import json

import pytest
from core.fixtures import CORPUS, write_model
from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer

from explorer.core.model import open_model

TEXTS = [
    *CORPUS,
    "  two  spaces\t\ttabs\n\nnewlines 1234567 café Straße 日本語 🐱 def f(x): return x**2",
    "UPPER lower MiXeD",
]


def test_vocab_json_and_merges_txt(tmp_path):
    ref = ByteLevelBPETokenizer()
    ref.train_from_iterator(TEXTS * 10, vocab_size=500, show_progress=False)
    ref.save_model(str(tmp_path))
    assert {p.name for p in tmp_path.iterdir()} == {"vocab.json", "merges.txt"}
    write_model(tmp_path, rows=ref.get_vocab_size(), dim=4)
    model = open_model(tmp_path)
    assert model.tokenizer is not None
    assert model.info()["tokenizer_source"] == "vocab.json + merges.txt (byte-level BPE)"
    for text in TEXTS:
        assert [t.id for t in model.tokenizer.encode(text)] == ref.encode(text).ids, text
    assert model.tokenizer.find(" cat") == ref.token_to_id("Ġcat")


@pytest.mark.parametrize("lower", [True, False])
def test_vocab_txt_wordpiece(tmp_path, lower):
    trained = BertWordPieceTokenizer(lowercase=lower)
    trained.train_from_iterator(TEXTS * 10, vocab_size=400, show_progress=False)
    trained.save_model(str(tmp_path))
    # the reference: Hugging Face's BERT tokenizer loaded from that vocab.txt
    ref = BertWordPieceTokenizer(str(tmp_path / "vocab.txt"), lowercase=lower)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": lower}))
    write_model(tmp_path, rows=ref.get_vocab_size(), dim=4)
    model = open_model(tmp_path)
    assert model.tokenizer is not None
    cased = "lower-cased" if lower else "cased"
    assert model.tokenizer_source == f"vocab.txt (WordPiece, {cased})"
    for text in TEXTS:
        ours = model.tokenizer.encode(text)
        assert [t.id for t in ours] == ref.encode(text, add_special_tokens=False).ids, text
        with_special = [t.id for t in model.tokenizer.encode(text, special=True)]
        assert with_special == ref.encode(text).ids


def test_no_tokenizer_files(tmp_path):
    write_model(tmp_path, rows=10, dim=4)
    model = open_model(tmp_path)
    assert model.tokenizer is None and model.info()["tokenizer_source"] is None
