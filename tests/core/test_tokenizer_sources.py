"""Folders without tokenizer.json: a real tokenizer is built from vocab.json + merges.txt or
vocab.txt, and tokenizes like the reference tokenizer those files were saved from."""

from __future__ import annotations

import json

import pytest
from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model
from tests.support.models import write_model
from tests.support.tokenizers import CORPUS

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


SPM_SETTINGS = {
    # Llama 2 style: BPE, byte fallback, no normalisation
    "llama": dict(
        model_type="bpe",
        byte_fallback=True,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
    ),
    # T5 style: Unigram with SentencePiece's default NFKC normalisation and whitespace clean-up
    "t5": dict(model_type="unigram", hard_vocab_limit=False),
}


@pytest.mark.parametrize("style", sorted(SPM_SETTINGS))
def test_tokenizer_model_sentencepiece(tmp_path, style):
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXTS * 10),
        model_prefix=str(tmp_path / "tokenizer"),
        vocab_size=500,
        character_coverage=1.0,
        minloglevel=2,
        **SPM_SETTINGS[style],
    )
    (tmp_path / "tokenizer.vocab").unlink()
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "tokenizer.model"))
    write_model(tmp_path, rows=sp.get_piece_size(), dim=4)
    model = open_model(tmp_path)
    assert model.tokenizer is not None
    assert model.tokenizer_source.startswith("tokenizer.model (SentencePiece")
    for text in TEXTS + ["unseen ☃ snowman", "ﬁ ligature ①"]:
        assert [t.id for t in model.tokenizer.encode(text)] == sp.encode(text), text


def test_broken_tokenizer_model(tmp_path):
    (tmp_path / "tokenizer.model").write_bytes(b"\x0a\xff\xff\xff")
    write_model(tmp_path, rows=10, dim=4)
    with pytest.raises(ModelFormatError, match="tokenizer.model: not a SentencePiece model"):
        open_model(tmp_path)
