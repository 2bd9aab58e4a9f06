"""What lets a one-row command skip work: the tokenizer check's verdict kept in the user cache
(and recomputed when its entry is damaged), a row's label without building the tokenizer, GGML
type sizes without importing gguf, and Q8_0 rows decoded without it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from explorer.core import cache
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from explorer.core.tokenizer import match_cache
from explorer.core.tokenizer.match import Vocabulary, check_match
from explorer.core.tokenizer.match_cache import check_model
from tests.support.models import random_matrix, stored, write_gguf
from tests.support.tokenizers import byte_level_bpe, gguf_tokenizer_keys


@pytest.fixture(scope="module")
def demo():
    model = open_model(demo_model_dir())
    yield model
    model.close()


def _entry(root, model):
    key = match_cache.key_of(model, model.tokenizer.identity)
    assert key is not None
    return cache.key_dir(root, key)


def test_the_verdict_is_kept_and_served_from_the_cache(demo, tmp_path):
    first = check_model(demo, cache_dir=tmp_path)
    assert first is not None and first.verdict == "matches"
    assert (_entry(tmp_path, demo) / "meta.json").is_file()
    # the entry is what is read next time: change its sentence and see it come back
    meta_path = _entry(tmp_path, demo) / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["extra"]["verdict"]["sentence"] = "matches (from the cache)"
    meta_path.write_text(json.dumps(meta))
    again = check_model(demo, cache_dir=tmp_path)
    assert again is not None and again.sentence == "matches (from the cache)"
    assert {**again.as_dict(), "sentence": first.sentence} == first.as_dict()


@pytest.mark.parametrize(
    "damage",
    [
        lambda m: m["extra"]["verdict"].update(verdict="maybe"),
        lambda m: m["extra"]["verdict"].pop("auc"),
        lambda m: m["extra"]["verdict"].update(pairs="many"),
        lambda m: m["extra"]["verdict"].update(offset=True),
        lambda m: m["extra"].update(verdict=[1, 2]),
        lambda m: m["key"].update(size=1),
        lambda m: m.update(format=-1),
    ],
)
def test_a_damaged_entry_is_recomputed_and_rewritten(demo, tmp_path, damage):
    fresh = check_model(demo, cache_dir=tmp_path)
    meta_path = _entry(tmp_path, demo) / "meta.json"
    meta = json.loads(meta_path.read_text())
    damage(meta)
    meta_path.write_text(json.dumps(meta))
    assert check_model(demo, cache_dir=tmp_path) == fresh
    rewritten = json.loads(meta_path.read_text())
    assert match_cache.verdict_from(rewritten["extra"]["verdict"]) == fresh


def test_unreadable_entries_are_recomputed(demo, tmp_path):
    fresh = check_model(demo, cache_dir=tmp_path)
    meta_path = _entry(tmp_path, demo) / "meta.json"
    meta_path.write_bytes(b"\xff\x00 not json")
    assert check_model(demo, cache_dir=tmp_path) == fresh
    meta_path.unlink()
    meta_path.mkdir()  # a folder where the file should be
    assert check_model(demo, cache_dir=tmp_path) == fresh


def test_another_tokenizer_file_gets_its_own_verdict(demo, tmp_path):
    """The key holds the tokenizer's file: a changed tokenizer.json is judged again."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(demo_model_dir(), folder)
    model = open_model(folder)
    try:
        assert check_model(model, cache_dir=tmp_path / "c").verdict == "matches"
        # ids shifted by 3 in a new tokenizer.json: the cached "matches" must not be served
        spec = json.loads((folder / "tokenizer.json").read_text())
        vocab = spec["model"]["vocab"]
        n = len(vocab)
        spec["model"]["vocab"] = {p: (i + 3) % n for p, i in vocab.items()}
        spec["added_tokens"] = [{**t, "id": (t["id"] + 3) % n} for t in spec["added_tokens"]]
        (folder / "tokenizer.json").write_text(json.dumps(spec))
        shifted = open_model(folder)
        verdict = check_model(shifted, cache_dir=tmp_path / "c")
        assert verdict is not None and verdict.verdict == "shifted"
        shifted.close()
    finally:
        model.close()


def test_the_cache_holds_only_verdicts_on_a_model_s_own_tokenizer(demo, tmp_path, monkeypatch):
    """A vocabulary given to the check is judged as given, and nothing is written."""
    from explorer.core.tokenizer import match

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    words = [b"alpha", b"beta", b"gamma", b"Alpha"] + [None] * (demo.rows - 4)
    assert match.check_model(demo, Vocabulary(words)).verdict == "unknown"
    assert check_match(Vocabulary(words), demo.rows, demo.vectors).verdict == "unknown"
    assert not any(tmp_path.rglob("meta.json"))


def test_one_label_equals_the_tokenizer_s_label(demo):
    other = open_model(demo_model_dir())
    try:
        tok = other.tokenizer
        ids = [0, 1, 100, 101, 102, 103, 3710, 1996, 2003, other.rows - 1]
        ones = [tok.one_label(i) for i in ids]
        assert "labels" not in vars(tok)  # nothing built for the whole vocabulary
        assert ones == [demo.tokenizer.label(i) for i in ids]
    finally:
        other.close()


def test_gguf_label_needs_no_built_tokenizer(tmp_path):
    ref = byte_level_bpe(True)
    keys = gguf_tokenizer_keys(ref, "smollm")
    n = len(keys["tokens"])
    path = write_gguf(
        tmp_path / "t.gguf",
        {"token_embd.weight": (stored(random_matrix(n, 32), "Q8_0"), "Q8_0")},
        tokenizer=keys,
    )
    lazy = open_model(path).tokenizer
    labels = [lazy.one_label(i) for i in range(n)]
    assert lazy._tokenizer is None  # answered from the metadata
    built = open_model(path).tokenizer
    built.tokenizer  # noqa: B018 - build it
    assert labels == [built.label(i) for i in range(n)]
    assert labels == [built.piece_text(i, ref.id_to_token(i)) for i in range(n)]


def test_ggml_type_table_equals_gguf_s():
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    from explorer.core.model.formats import ggml_types

    for type_id, (name, block, size) in ggml_types.TYPES.items():
        kind = GGMLQuantizationType(type_id)
        assert (kind.name, *GGML_QUANT_SIZES[kind]) == (name, block, size)
    newest = max(GGML_QUANT_SIZES)  # a type missing from the table comes from gguf
    assert ggml_types.lookup(int(newest)) == (newest.name, *GGML_QUANT_SIZES[newest])
    assert ggml_types.lookup(10_000) is None


def test_q8_0_rows_decode_as_gguf_does():
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    from explorer.core.model.decode import decode_rows

    raw = stored(random_matrix(9, 64), "Q8_0")
    blocks = np.asarray(raw).view(np.uint8).copy()
    blocks[0, :2] = np.frombuffer(np.float16(np.inf).tobytes(), np.uint8)  # an inf scale
    blocks[1, 34:36] = np.frombuffer(np.float16(np.nan).tobytes(), np.uint8)
    tagged = blocks.view(np.dtype(np.uint8, metadata={"ggml_type": 8}))
    want = dequantize(blocks, GGMLQuantizationType.Q8_0)
    with np.errstate(invalid="ignore"):
        got = decode_rows(tagged)
        one = decode_rows(tagged[4])
    assert got.dtype == np.float32 and np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(one, want[4])
    assert decode_rows(tagged[:0]).shape == (0, 64)


def test_the_cache_folder_is_platformdirs_one(monkeypatch, tmp_path):
    from platformdirs import user_cache_dir

    for value in (None, "", "  ", str(tmp_path)):
        if value is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert cache.default_cache_dir() == Path(user_cache_dir(cache.APP_NAME))
