"""Does the tokenizer belong to the matrix? The demo's real rows read through its own tokenizer,
through the same tokenizer with ids shifted or permuted, and through SmolLM2's real vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.model.open import open_model
from explorer.core.model.tokenizer import tokenizer_at
from explorer.core.resources import demo_model_dir
from explorer.core.tokenizer.match import (
    MATCH_AUC,
    Vocabulary,
    check_match,
    check_model,
    variant_pairs,
)
from explorer.core.tokenizer.vocab_table import VocabTable, VocabTokenizer
from tests.support.mismatch import (
    permuted_demo_tokenizer,
    respelled_demo_tokenizer,
    shifted_demo_tokenizer,
    smollm2_tokenizer,
)


@pytest.fixture(scope="module")
def demo():
    model = open_model(demo_model_dir())
    yield model
    model.close()


def _read_through(model, path):
    """The verdict for `model`'s rows read through the tokenizer at `path`."""
    info, _ = tokenizer_at(path, model.rows)
    return check_model(model, Vocabulary.of(info))


def test_the_demo_matches_its_own_tokenizer(demo):
    verdict = demo.check_tokenizer()
    assert verdict is not None and verdict.verdict == "matches" and verdict.offset == 0
    assert verdict.auc is not None and verdict.auc > 0.9
    assert verdict.variant_cosine is not None and verdict.random_cosine is not None
    assert verdict.variant_cosine > verdict.random_cosine + 0.3
    assert verdict.sentence.startswith("matches (variant pairs 0.")
    assert verdict.warning is None and demo.warnings == []
    assert demo.info()["tokenizer_match"]["verdict"] == "matches"
    # BERT's [unusedN] rows were never trained: far shorter than word rows, close to their mean
    assert verdict.untrained_norm is not None and verdict.untrained_norm < 0.5
    assert verdict.untrained_cohesion is not None and verdict.untrained_cohesion > 0.6
    assert verdict.rows_read < 6000  # a few thousand rows, not the matrix


def test_variant_pairs_spell_one_word(demo):
    vocab = Vocabulary.of(demo.tokenizer)
    pairs = variant_pairs(vocab)
    assert len(pairs) == 2048 and len(np.unique(pairs, axis=0)) == len(pairs)
    for a, b in pairs[:300].tolist():
        words = [demo.tokenizer.pieces[i].removeprefix("##").lower() for i in (a, b)]
        short, long = sorted(words, key=len)
        assert long in (short, short + "s"), (a, b, words)
    labels = {(demo.label(a), demo.label(b)) for a, b in variant_pairs(vocab, limit=100_000)}
    assert ("cat", "cats") in labels and ("cat", "##cat") in labels


def test_the_window_tokenizer_reads_the_same_vocabulary(demo):
    table = VocabTable.from_info(demo.tokenizer)
    window = VocabTokenizer(table, lambda text, special: (np.zeros(0),) * 3, rows=demo.rows)
    here, there = Vocabulary.of(demo.tokenizer), Vocabulary.of(window)
    assert list(here.tokens) == list(there.tokens)
    assert (here.continues, here.special, here.word_pieces) == (
        there.continues,
        there.special,
        there.word_pieces,
    )


@pytest.mark.parametrize("shift", [1, 7])
def test_shifted_ids_are_found(demo, tmp_path, shift):
    verdict = _read_through(demo, shifted_demo_tokenizer(tmp_path, shift))
    assert verdict.verdict == "shifted" and verdict.offset == -shift  # E[id - shift] is token id
    assert verdict.auc is not None and verdict.auc < 0.6
    assert verdict.shifted_auc is not None and verdict.shifted_auc >= MATCH_AUC
    assert f"shifted by {-shift:+d} id" in verdict.sentence
    assert f"row is E[id − {shift}]" in verdict.shift_words and f"{shift} id" in verdict.warning
    assert verdict.warning is not None


def test_a_permuted_tokenizer_does_not_match(demo, tmp_path):
    verdict = _read_through(demo, permuted_demo_tokenizer(tmp_path))
    assert verdict.verdict == "mismatch" and verdict.offset is None
    assert verdict.auc is not None and abs(verdict.auc - 0.5) < 0.1
    assert verdict.sentence.startswith("does not match")
    # the rows at the never-used pieces' new ids are ordinary trained rows
    assert verdict.untrained_norm is not None and verdict.untrained_norm > 0.8


def test_another_models_tokenizer_does_not_match(demo, tmp_path):
    """SmolLM2's real vocabulary (larger: bounded to the demo's 30,522 rows) over the demo."""
    path = smollm2_tokenizer(tmp_path)
    info, _ = tokenizer_at(path, demo.rows)
    assert info.vocab_size == 49152 and len(info.pieces) == demo.rows
    vocab = Vocabulary.of(info)
    assert len(variant_pairs(vocab)) == 2048  # ␣cat / cat / Cat pairs from byte-level pieces
    verdict = check_model(demo, vocab)
    assert verdict is not None and verdict.verdict == "mismatch"


def test_use_tokenizer_swaps_and_warns(tmp_path):
    model = open_model(demo_model_dir())
    try:
        model.use_tokenizer(*tokenizer_at(shifted_demo_tokenizer(tmp_path, 3), model.rows))
        assert model.tokenizer is not None and model.tokenizer.piece(3) == "[PAD]"
        verdict = model.check_tokenizer()
        assert verdict is not None and verdict.offset == -3
        assert any("shifted by -3 ids" in w for w in model.warnings)
        assert model.info()["tokenizer_match"]["offset"] == -3
    finally:
        model.close()


def test_few_variant_pairs_give_no_verdict(demo):
    words = [b"alpha", b"beta", b"gamma", b"Alpha"] + [None] * (demo.rows - 4)
    verdict = check_match(Vocabulary(words), demo.rows, demo.vectors)
    assert verdict.verdict == "unknown" and verdict.offset is None and verdict.pairs == 1
    assert verdict.warning is None


def test_tokenizer_at_refuses_what_is_not_a_tokenizer(tmp_path):
    with pytest.raises(ModelFormatError, match="no such tokenizer"):
        tokenizer_at(tmp_path / "missing.json", 10)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelFormatError, match="not a tokenizer"):
        tokenizer_at(tmp_path / "notes.txt", 10)
    with pytest.raises(ModelFormatError, match="holds no tokenizer"):
        tokenizer_at(tmp_path, 10)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ModelFormatError, match="cannot load tokenizer"):
        tokenizer_at(tmp_path / "bad.json", 10)


def test_a_random_twin_is_not_judged(demo, tmp_path):
    """A twin's rows are noise by design: its real model's verdict does not carry over."""
    from explorer.core.learning.twin_model import twin_model

    demo.check_tokenizer()
    twin = twin_model(demo, cache_dir=tmp_path)
    assert twin.tokenizer_match is not None and twin.tokenizer_match.verdict == "unknown"
    assert "random twin" in twin.tokenizer_match.sentence and twin.warnings == []


def test_tokenizer_at_reads_a_folder_and_a_gguf(demo, tmp_path):
    from tokenizers import Tokenizer

    from tests.support.models import random_matrix, stored, write_gguf
    from tests.support.tokenizers import gguf_tokenizer_keys

    info, _ = tokenizer_at(demo_model_dir(), demo.rows)  # a folder: its tokenizer.json
    assert check_model(demo, Vocabulary.of(info)).verdict == "matches"
    bert = tmp_path / "bert"  # a WordPiece folder without tokenizer.json, named by its vocab.txt
    bert.mkdir()
    (bert / "vocab.txt").write_text("\n".join(demo.tokenizer.pieces) + "\n", encoding="utf-8")
    info, _ = tokenizer_at(bert / "vocab.txt", demo.rows)
    assert info.vocab_size == demo.rows
    assert check_model(demo, Vocabulary.of(info)).verdict == "matches"
    smol = Tokenizer.from_file(str(smollm2_tokenizer(tmp_path / "smol")))
    raw = stored(random_matrix(64, 32), "Q8_0")
    path = write_gguf(
        tmp_path / "smol.gguf",
        {"token_embd.weight": (raw, "Q8_0")},
        tokenizer=gguf_tokenizer_keys(smol, "smollm"),
    )
    info, _ = tokenizer_at(path, demo.rows)  # a GGUF: the tokenizer in its metadata
    assert info.vocab_size == 49152 and info.piece(1) == "<|im_start|>"
    assert check_model(demo, Vocabulary.of(info)).verdict == "mismatch"


@pytest.mark.parametrize(("scheme", "spaced"), [("metaspace", "▁cat"), ("byte-level", "Ġcat")])
def test_sentencepiece_and_byte_level_spellings_match(demo, tmp_path, scheme, spaced):
    """The demo's vocabulary respelled with ▁ or Ġ word starts, on the same ids: its rows still
    belong to it, and ␣cat pairs with cat (which was ##cat)."""
    info, _ = tokenizer_at(respelled_demo_tokenizer(tmp_path, scheme), demo.rows)
    assert info.piece(demo.tokenizer.find("cat")) == spaced
    vocab = Vocabulary.of(info)
    labels = {(info.label(a), info.label(b)) for a, b in variant_pairs(vocab, limit=100_000)}
    assert ("␣cat", "cat") in labels or ("cat", "␣cat") in labels
    verdict = check_model(demo, vocab)
    assert verdict is not None and verdict.verdict == "matches" and verdict.auc > 0.9
