"""Derived SentencePiece merges kept in the user cache, so a GGUF's tokenizer is derived once.

An entry belongs to one file (path, size, mtime) and one vocabulary (a digest of the pieces,
types and scores); it is written to a temporary folder and renamed into place, and checked
(version, key, shape, ids in range, checksum of its bytes) before it is used. Anything off, and
the merges are derived again and the entry rewritten.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.tokenizer.gguf_vocab import GGUFVocab

KIND = "gguf-merges"
VERSION = 1


def vocab_digest(vocab: GGUFVocab) -> str:
    h = hashlib.sha256()
    h.update(np.array([len(t) for t in vocab.tokens], dtype=np.int64).tobytes())
    h.update("".join(vocab.tokens).encode("utf-8", "surrogatepass"))
    for arr in (vocab.types, vocab.scores):
        h.update(b"-" if arr is None else np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def _key(file: Path, vocab: GGUFVocab) -> dict:
    path = file.resolve()
    st = path.stat()
    return {
        "kind": KIND,
        "version": VERSION,
        "file": str(path),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "vocab_sha256": vocab_digest(vocab),
    }


def _load(folder: Path, key: dict, tokens: int) -> np.ndarray | None:
    meta = cache.read_meta(folder)
    if not isinstance(meta, dict) or meta.get("key") != key:
        return None
    try:
        data = (folder / "merges.npy").read_bytes()
        digest = (folder / "merges.sha256").read_text(encoding="ascii")
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    try:
        pairs = np.load(folder / "merges.npy", allow_pickle=False)
    except (OSError, ValueError):
        return None
    ok = pairs.dtype == np.int32 and pairs.ndim == 2 and pairs.shape[1] == 2
    if not ok or (pairs.size and (pairs.min() < 0 or pairs.max() >= tokens)):
        return None
    return pairs


def _save(root: Path, folder: Path, key: dict, pairs: np.ndarray) -> None:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
        np.save(tmp / "merges.npy", pairs, allow_pickle=False)
        digest = hashlib.sha256((tmp / "merges.npy").read_bytes()).hexdigest()
        (tmp / "merges.sha256").write_text(digest, encoding="ascii")
        cache.publish(tmp, folder, key)
    except OSError:
        pass  # a read-only or full cache: derive again next time


def merge_ids(
    file: Path, root: Path | None = None
) -> Callable[[GGUFVocab, Callable[[], np.ndarray]], np.ndarray]:
    """A `sources.build_gguf` merge source that reads and fills the cache under `root`."""

    def get(vocab: GGUFVocab, derive: Callable[[], np.ndarray]) -> np.ndarray:
        base = root if root is not None else cache.default_cache_dir()
        try:
            key = _key(file, vocab)
        except OSError:
            return derive()
        folder = cache.key_dir(base, key)
        pairs = _load(folder, key, len(vocab.tokens))
        if pairs is None:
            pairs = derive().astype(np.int32)
            _save(base, folder, key, pairs)
        return pairs

    return get
