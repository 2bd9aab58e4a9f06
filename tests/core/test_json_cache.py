"""A tokenizer.json built once is answered from the user cache until text is tokenized, with the
same answers as the built tokenizer; a damaged entry is rebuilt, never trusted or fatal."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError
from explorer.core.resources import demo_model_dir
from explorer.core.tokenizer import json_cache
from explorer.core.tokenizer.json_cache import CachedTokenizerInfo
from explorer.core.tokenizer.tokens import TokenizerInfo

ROWS = 30522
IDS = [0, 100, 101, 1012, 2003, 3710, 7592, 29612, ROWS - 1]


@pytest.fixture
def tokenizer_json(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "tokenizer.json"
    shutil.copy(demo_model_dir() / "tokenizer.json", path)
    return path


def _entry(tmp_path):
    (found,) = (tmp_path / "cache").rglob("meta.json")
    return found.parent


def test_a_second_open_answers_without_building(tokenizer_json):
    built = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert built.built and not isinstance(built, CachedTokenizerInfo)
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo) and not lazy.built
    assert [lazy.one_label(i) for i in IDS] == [built.label(i) for i in IDS]
    assert lazy.vocab_size == built.vocab_size and lazy.special_ids == built.special_ids
    assert lazy.added_ids == built.added_ids and lazy.identity == built.identity
    assert lazy.pieces == built.pieces and lazy.labels == built.labels
    assert [lazy.token_bytes(i) for i in IDS] == [built.token_bytes(i) for i in IDS]
    assert np.array_equal(lazy.present_mask(ROWS), built.present_mask(ROWS))
    assert not lazy.built  # all of that from the cached table
    text = "The cat sat on the mat, naïvely."
    assert [t.id for t in lazy.encode(text)] == [t.id for t in built.encode(text)]
    assert lazy.built and lazy.find("cat") == built.find("cat")


@pytest.mark.parametrize(
    "damage",
    [
        lambda m: m["extra"].update(spec={"model": "WordPiece"}),
        lambda m: m["extra"].update(vocab_size=-3),
        lambda m: m["extra"].update(vocab_size=True),
        lambda m: m["extra"]["spec"]["added_tokens"].append({"id": "zero"}),
        lambda m: m["extra"].pop("spec"),
        lambda m: m["key"].update(sha256="0" * 64),
    ],
)
def test_a_damaged_spec_means_building_again(tokenizer_json, tmp_path, damage):
    built = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    meta_path = _entry(tmp_path) / "meta.json"
    meta = json.loads(meta_path.read_text())
    damage(meta)
    meta_path.write_text(json.dumps(meta))
    again = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert again.built and again.labels == built.labels
    third = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)  # the entry was rewritten
    assert isinstance(third, CachedTokenizerInfo) and third.labels == built.labels


@pytest.mark.parametrize("array", ["pieces", "data_offsets", "flags"])
def test_damaged_arrays_fall_back_to_the_tokenizer(tokenizer_json, tmp_path, array):
    built = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    path = _entry(tmp_path) / f"{array}.npy"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF  # the checksum no longer matches
    path.write_bytes(bytes(raw))
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo) and lazy.table is None
    assert [lazy.one_label(i) for i in IDS] == [built.label(i) for i in IDS]
    assert lazy.labels == built.labels


def test_inconsistent_offsets_are_refused(tokenizer_json, tmp_path):
    """Arrays that pass their checksums (rewritten with the meta) but do not fit together."""
    from explorer.core import cache

    TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    folder = _entry(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    arrays = {p.stem: np.load(p) for p in folder.glob("*.npy")}
    arrays["piece_offsets"] = arrays["piece_offsets"][::-1].copy()
    cache.save(tmp_path / "cache" / "embedding-explorer", meta["key"], arrays, meta["extra"])
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo) and lazy.table is None
    assert lazy.one_label(3710) == "serve"


def test_a_changed_file_is_built_and_checked_again(tokenizer_json):
    TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    spec = json.loads(tokenizer_json.read_text())
    spec["model"]["vocab"]["serve"], spec["model"]["vocab"]["[PAD]"] = 0, 3710
    tokenizer_json.write_text(json.dumps(spec))
    info = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert info.built and info.one_label(0) == "serve"
    tokenizer_json.write_text('{"model": 3}')
    with pytest.raises(ModelFormatError, match="cannot load tokenizer"):
        TokenizerInfo.from_file(tokenizer_json, rows=ROWS)


def test_a_build_that_fails_later_is_one_clear_error(tokenizer_json):
    """The cached entry vouches for these bytes; should the library refuse them after all (a
    different `tokenizers` version), encoding says so in one line."""
    TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo)
    lazy._data = b"{not json"
    with pytest.raises(ModelFormatError, match="tokenizer.json: cannot load tokenizer"):
        lazy.encode("cat")


def test_no_cache_without_rows(tokenizer_json, tmp_path):
    assert TokenizerInfo.from_file(tokenizer_json).built
    assert TokenizerInfo.from_file(tokenizer_json).built
    assert not (tmp_path / "cache").exists()
    assert json_cache.KIND == "tokenizer-json"


def test_pieces_that_do_not_decode_fall_back_to_the_tokenizer(tokenizer_json, tmp_path):
    """A table rewritten with matching checksums but bytes that are no UTF-8."""
    from explorer.core import cache

    built = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    folder = _entry(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    arrays = {p.stem: np.load(p) for p in folder.glob("*.npy")}
    arrays["pieces"] = np.full_like(arrays["pieces"], 0xFF)
    cache.save(tmp_path / "cache" / "embedding-explorer", meta["key"], arrays, meta["extra"])
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo) and lazy.table is not None
    assert lazy.one_label(3710) == "serve" and lazy.pieces == built.pieces


def test_the_cached_table_is_the_one_the_tokenizer_makes(tokenizer_json):
    """The window's tokenizer process sends the cached table instead of making it again."""
    from explorer.core.tokenizer.vocab_table import VocabTable

    built = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    lazy = TokenizerInfo.from_file(tokenizer_json, rows=ROWS)
    assert isinstance(lazy, CachedTokenizerInfo) and lazy.table is not None
    made = VocabTable.from_info(built)
    assert lazy.table.meta == made.meta
    for cached, fresh in zip(lazy.table.buffers(), made.buffers(), strict=True):
        assert bytes(cached) == bytes(fresh)
