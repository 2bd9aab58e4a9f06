"""Per-file cache of analysis arrays, keyed to the exact tensor (path, size, mtime, header, name).

One folder per (analysis kind, file): ``meta.json`` holds the key, arrays are ``.npy`` files.
A cache that cannot be read or written is ignored: the analysis is simply computed again.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np

from explorer.core import cache


def load(model, kind: str, params: dict, cache_dir: Path) -> dict[str, np.ndarray] | None:
    """The cached arrays of this analysis of this exact tensor, or None."""
    try:
        key = cache.file_key(model, kind, params)
    except OSError:
        return None
    folder = cache.key_dir(Path(cache_dir), key)
    meta = cache.read_meta(folder)
    if meta is None or meta.get("key") != key:
        return None
    try:
        return {p.stem: np.load(p, allow_pickle=False) for p in folder.glob("*.npy")}
    except (OSError, ValueError):
        return None


def save(model, kind: str, params: dict, cache_dir: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Store arrays for this analysis of this exact tensor; False if the cache is not writable."""
    try:
        key = cache.file_key(model, kind, params)
        final = cache.key_dir(Path(cache_dir), key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
        try:
            for name, arr in arrays.items():
                np.save(tmp / f"{name}.npy", np.asarray(arr), allow_pickle=False)
            cache.publish(tmp, final, key)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return True
    except OSError:
        return False
