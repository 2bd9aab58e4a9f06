"""On-disk cache locations keyed to the exact bytes of a model file (path, size, mtime, header)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np
from platformdirs import user_cache_dir

APP_NAME = "embedding-explorer"


def default_cache_dir() -> Path:
    return Path(user_cache_dir(APP_NAME))


def tensor_file(model) -> Path:
    """The file that holds the embedding tensor (the right shard of a sharded model)."""
    name = getattr(model.matrix, "filename", None)
    return Path(name) if name else Path(model.files[0])


def _header_hash(path: Path) -> str:
    with open(path, "rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        return hashlib.sha256(head + f.read(min(n, 100 << 20))).hexdigest()


def file_key(model, kind: str, params: dict) -> dict:
    """Everything that must match for a cached result to belong to this exact tensor."""
    path = tensor_file(model).resolve()
    st = path.stat()
    return {
        "kind": kind,
        "file": str(path),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "tensor": model.tensor,
        "header_sha256": _header_hash(path),
        "rows": int(model.rows),
        "dim": int(model.dim),
        "dtype": model.dtype,
        "params": params,
    }


def key_dir(root: Path, key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return root / key["kind"] / digest


def read_meta(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def publish(tmp: Path, final: Path, key: dict) -> None:
    """Make a fully written temporary folder the cache entry; drop stale entries of the file."""
    (tmp / "meta.json").write_text(json.dumps({"key": key}, sort_keys=True), encoding="utf-8")
    if final.exists():
        shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    for other in final.parent.iterdir():
        if other == final or not other.is_dir():
            continue
        meta = read_meta(other)
        if meta is not None and meta.get("key", {}).get("file") == key["file"]:
            shutil.rmtree(other, ignore_errors=True)


def open_array(path: Path) -> np.ndarray:
    """A cached array memory-mapped read-only (file-backed, not anonymous memory)."""
    return np.load(path, mmap_mode="r")
