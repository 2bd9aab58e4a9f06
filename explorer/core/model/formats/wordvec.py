"""Word vectors as people hold them: GloVe / word2vec / fastText text (`word v1 … vn` per line,
an optional `N D` header line; .txt, .vec), word2vec's binary format (an `N D` header line,
then each word, a space and N float32), and a .npy matrix with its word list beside it (one
word per line, or a column of a parquet or CSV file).

Text and binary files are parsed once into the user cache (a float32 matrix and its words,
written to a temporary folder and renamed into place, keyed by the file's identity) and
memory-mapped from there afterwards; a .npy is memory-mapped where it is.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from explorer.core.errors import ModelFormatError

TEXT_SUFFIXES = (".txt", ".vec")
WORD_LIST_SUFFIXES = (".txt", ".vocab", ".words", ".tsv", ".csv", ".parquet")
WORD_COLUMNS = ("word", "words", "token", "tokens", "vocab", "index")
CACHE_VERSION = 1
CHUNK_LINES = 8192
_HEADER = re.compile(rb"^\s*(\d+)\s+(\d+)\s*$")


@dataclass
class WordVectors:
    """What a word-vector file holds: the matrix (read-only memory map) and a word per row."""

    fmt: str  # "word-vectors-text", "word2vec-binary" or "npy"
    matrix: np.ndarray
    words: list[str]
    files: list[Path]
    warnings: list[str] = field(default_factory=list)


def _fail(path: Path, what: str) -> ModelFormatError:
    return ModelFormatError(f"{path.name}: {what}")


def _header(first_line: bytes) -> tuple[int, int] | None:
    m = _HEADER.match(first_line)
    return (int(m.group(1)), int(m.group(2))) if m else None


def kind_of(path: Path) -> str | None:
    """The word-vector format of a file, from its suffix (and, for .bin, its first line), or
    None. A .bin that does not start with `N D` is not word2vec (it may be a pickle)."""
    if not path.is_file():
        return None
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        return "word-vectors-text"
    if suffix == ".npy":
        return "npy"
    if suffix == ".bin":
        with open(path, "rb") as f:
            if _header(f.readline(64)) is not None:
                return "word2vec-binary"
    return None


def open_word_vectors(path: Path, cache_root: Path | None = None) -> WordVectors:
    kind = kind_of(path)
    if kind == "npy":
        return _open_npy(path, cache_root)
    if kind is None:
        raise _fail(path, "not a word-vector file")
    parse = _parse_binary if kind == "word2vec-binary" else _parse_text
    matrix, words = _cached([path], lambda out: parse(path, out), cache_root)
    return WordVectors(kind, matrix, words, [path])


# -- the cache ------------------------------------------------------------------------------------


def _identity(paths: list[Path]) -> dict:
    files = []
    for path in paths:
        st = path.stat()
        files.append([str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino])
    return {"files": files, "version": CACHE_VERSION}


def _load_cached(folder: Path, identity: dict) -> tuple[np.ndarray, list[str]] | None:
    """The cached matrix and words if the entry is whole and belongs to this file."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
        rows, dim = int(meta["rows"]), int(meta["dim"])
        vectors = folder / "vectors.f32"
        if (
            meta.get("source") != identity
            or not isinstance(words, list)
            or len(words) != rows
            or vectors.stat().st_size != rows * dim * 4
        ):
            return None
        matrix = np.memmap(vectors, dtype="<f4", mode="r", shape=(rows, dim))
        return matrix, [str(w) for w in words]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cached(
    paths: list[Path], parse: Callable[[BinaryIO], tuple[list[str], int]], root: Path | None
) -> tuple[np.ndarray, list[str]]:
    """The matrix and words `parse` writes (float32 rows to the file it is given), parsed once
    per identity of `paths` into the user cache and memory-mapped from there."""
    if root is None:
        from explorer.core.cache import default_cache_dir

        root = default_cache_dir()
    import hashlib  # here, not at the top: every model's open imports this module

    root = root / "word-vectors"
    path = paths[0]
    identity = _identity(paths)
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]
    final = root / digest
    found = _load_cached(final, identity)
    if found is not None:
        return found
    root.mkdir(parents=True, exist_ok=True)
    with _parsing(root / f".{digest}.lock"):  # one parse at a time (the window and its child)
        return _cached_once(path, identity, final, parse)


@contextmanager
def _parsing(lock: Path) -> Iterator[None]:
    """An exclusive lock on `lock` where the platform has fcntl (elsewhere: none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: concurrent parses publish one result
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _cached_once(
    path: Path, identity: dict, final: Path, parse: Callable[[BinaryIO], tuple[list[str], int]]
) -> tuple[np.ndarray, list[str]]:
    import shutil
    import tempfile

    found = _load_cached(final, identity)  # parsed by another process while this one waited
    if found is not None:
        return found
    root = final.parent
    tmp = Path(tempfile.mkdtemp(prefix=".parsing-", dir=root))
    try:
        with open(tmp / "vectors.f32", "wb") as out:
            words, dim = parse(out)
        (tmp / "words.json").write_text(json.dumps(words, ensure_ascii=False), encoding="utf-8")
        meta = {"source": identity, "rows": len(words), "dim": dim}
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        if _load_cached(final, identity) is None:  # else another process published it meanwhile
            shutil.rmtree(final, ignore_errors=True)  # a broken entry of the same name
            try:
                os.replace(tmp, final)
            except OSError:  # published by another process in between
                pass
            _drop_stale(final, identity)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = _load_cached(final, identity)
    if found is None:
        raise _fail(path, f"cannot use the parsed copy in {final}")
    return found


def _drop_stale(final: Path, identity: dict) -> None:
    """Remove the entries parsed from earlier versions of the same file."""
    import shutil

    for other in final.parent.iterdir():
        if other == final or not other.is_dir() or other.name.startswith("."):
            continue
        try:
            meta = json.loads((other / "meta.json").read_text(encoding="utf-8"))
            same = meta["source"]["files"][0][0] == identity["files"][0][0]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue
        if same:
            shutil.rmtree(other, ignore_errors=True)


# -- text -----------------------------------------------------------------------------------------


def _parse_text(path: Path, out: BinaryIO) -> tuple[list[str], int]:
    """Write the vectors of a text file to `out` as float32 rows; its words and dimension."""
    words: list[str] = []
    dim = 0
    announced: int | None = None
    pending: list[tuple[int, str]] = []  # (line number, the values' text)
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip(b"\r\n").rstrip(b" \t")
            if number == 1 and (header := _header(line)) is not None:
                announced, dim = header
                continue
            if not line:
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                raise _fail(path, f"line {number} is not valid UTF-8") from None
            if not dim:
                dim = len(text.split()) - 1
                if dim < 1:
                    raise _fail(path, f"line {number} has a word but no values")
            word, _, values = text.partition(" ")
            if values.count(" ") != dim - 1:  # a word with spaces in it, tabs, or a bad line
                parts = text.rsplit(" ", dim) if " " in text else text.split("\t")
                if len(parts) != dim + 1 or not parts[0]:
                    raise _fail(path, f"line {number} has {len(parts) - 1} values, not {dim}")
                word, values = parts[0], " ".join(parts[1:])
            words.append(word)
            pending.append((number, values))
            if len(pending) == CHUNK_LINES:
                _write_values(path, pending, dim, out)
                pending = []
    _write_values(path, pending, dim, out)
    if not words:
        raise _fail(path, "holds no word vectors")
    if announced is not None and announced != len(words):
        raise _fail(
            path,
            f"its header announces {announced} words but it holds {len(words)} (truncated?)",
        )
    return words, dim


def _write_values(path: Path, pending: list[tuple[int, str]], dim: int, out: BinaryIO) -> None:
    if not pending:
        return
    try:
        with warnings.catch_warnings():  # older numpy warns where newer raises
            warnings.simplefilter("ignore", DeprecationWarning)
            values = np.fromstring(" ".join(t for _, t in pending), dtype=np.float32, sep=" ")
    except ValueError:
        values = np.zeros(0, np.float32)
    if values.size != len(pending) * dim:
        for number, text in pending:  # find the line
            try:
                [float(v) for v in text.split()]
            except ValueError as e:
                bad = str(e).rsplit(":", 1)[-1].strip()
                raise _fail(path, f"line {number}: {bad} is not a number") from None
        raise _fail(
            path, f"lines {pending[0][0]}-{pending[-1][0]} hold values that are not numbers"
        )
    out.write(values.astype("<f4").tobytes())


# -- word2vec binary ------------------------------------------------------------------------------


def _parse_binary(path: Path, out: BinaryIO) -> tuple[list[str], int]:
    data = np.memmap(path, dtype=np.uint8, mode="r")
    raw = memoryview(data)  # type: ignore[arg-type]
    size = len(raw)
    end = bytes(raw[:64]).find(b"\n")
    header = _header(bytes(raw[:end])) if end > 0 else None
    if header is None:
        raise _fail(path, "does not start with a `words dimension` line")
    rows, dim = header
    if dim < 1:
        raise _fail(path, "its header gives a dimension of 0")
    width = dim * 4
    words: list[str] = []
    pos = end + 1
    block: list[np.ndarray] = []
    for row in range(rows):
        while pos < size and raw[pos] in (0x0A, 0x20):  # the newline after the previous vector
            pos += 1
        space = bytes(raw[pos : pos + 1024]).find(b" ")
        if space <= 0:
            raise _fail(path, f"word {row + 1} of {rows}: no word followed by a space (truncated?)")
        word = bytes(raw[pos : pos + space]).decode("utf-8", errors="backslashreplace")
        start = pos + space + 1
        if start + width > size:
            raise _fail(path, f"word {row + 1} of {rows} ({word!r}) is cut short (truncated?)")
        words.append(word)
        block.append(np.frombuffer(raw[start : start + width], dtype="<f4"))
        pos = start + width
        if len(block) == CHUNK_LINES:
            out.write(np.concatenate(block).tobytes())
            block = []
    if block:
        out.write(np.concatenate(block).tobytes())
    del raw
    return words, dim


# -- .npy and a word list -------------------------------------------------------------------------


def _open_npy(path: Path, cache_root: Path | None) -> WordVectors:
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _fail(path, f"not a readable .npy file ({str(e).splitlines()[0][:120]})") from None
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise _fail(path, f"holds shape {list(matrix.shape)}, not [words, dimension]")
    if matrix.dtype not in (np.dtype("<f2"), np.dtype("<f4"), np.dtype("<f8")):
        raise _fail(path, f"holds {matrix.dtype}, not little-endian float16/32/64 values")
    listed = word_list_for(path)
    words = read_word_list(listed)
    if len(words) != matrix.shape[0]:
        raise _fail(path, f"has {matrix.shape[0]} rows but {listed.name} lists {len(words)} words")
    if not matrix.flags.c_contiguous:  # column-major: rows are scattered; copied once, by rows
        if matrix.dtype == np.float64:
            raise _fail(path, "holds column-major float64; save it row-major (C order) first")

        def by_rows(out: BinaryIO) -> tuple[list[str], int]:
            for start in range(0, matrix.shape[0], CHUNK_LINES):
                block = matrix[start : start + CHUNK_LINES]
                out.write(np.ascontiguousarray(block, dtype="<f4").tobytes())
            return words, int(matrix.shape[1])

        matrix, words = _cached([path, listed], by_rows, cache_root)
    return WordVectors("npy", matrix, words, [path, listed])


def word_list_for(path: Path) -> Path:
    """The word list beside a .npy: one with the same name, else the only word list there."""
    for suffix in WORD_LIST_SUFFIXES:
        same = path.with_suffix(suffix)
        if same.is_file():
            return same
    found = sorted(
        p for p in path.parent.iterdir() if p.suffix.lower() in WORD_LIST_SUFFIXES and p.is_file()
    )
    if len(found) == 1:
        return found[0]
    names = ", ".join(f"{path.stem}{s}" for s in (".txt", ".parquet", ".csv"))
    raise _fail(
        path,
        "a .npy matrix needs its word list beside it (one word per line, or a parquet/CSV "
        f"column): {names}"
        + (f"; found several: {found[0].name}, {found[1].name}" if found else ""),
    )


def read_word_list(path: Path) -> list[str]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet_words(path)
    if suffix in (".csv", ".tsv"):
        return _csv_words(path, "\t" if suffix == ".tsv" else ",")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _fail(path, "is not UTF-8 text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _pick_column(path: Path, names: list[str]) -> str:
    lowered = {n.lower(): n for n in names}
    for want in WORD_COLUMNS:
        if want in lowered:
            return lowered[want]
    if len(names) == 1:
        return names[0]
    raise _fail(path, f"no word column among {', '.join(names[:8])} (name one 'word')")


def _parquet_words(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise _fail(
            path, "reading a parquet word list needs pyarrow (pip install pyarrow)"
        ) from None
    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow's ArrowInvalid and friends
        raise _fail(path, f"not a readable parquet file ({str(e).splitlines()[0][:120]})") from None
    names = [f.name for f in table.schema if str(f.type) in ("string", "large_string")]
    if not names:
        raise _fail(path, "has no text column")
    column = _pick_column(path, names)
    return [str(w) for w in table.column(column).to_pylist()]


def _csv_words(path: Path, delimiter: str) -> list[str]:
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter=delimiter))
    if not rows:
        raise _fail(path, "is empty")
    column = rows[0].index(_pick_column(path, rows[0]))
    return [row[column] if column < len(row) else "" for row in rows[1:]]
