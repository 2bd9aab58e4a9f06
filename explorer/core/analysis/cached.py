"""Per-file cache of analysis arrays, keyed to the exact tensor (path, size, mtime, blocks, name).

One checked entry per (analysis kind, file) in `explorer.core.cache`. A cache that cannot be
read, fails a check or cannot be written is not used: the analysis is computed again, and
`load` says why in a line the caller shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explorer.core import cache
from explorer.core.cache import ArraySpec


def load(
    model, kind: str, params: dict, cache_dir: Path, specs: dict[str, ArraySpec], what: str
) -> tuple[dict[str, np.ndarray] | None, str]:
    """(the cached arrays of this analysis of this exact tensor, "") or (None, status line);
    the line is empty when there was simply nothing cached."""
    try:
        key = cache.file_key(model, kind, params)
    except (OSError, cache.ExplorerError):
        return None, ""
    loaded, why = cache.load(Path(cache_dir), key, specs)
    if loaded is None:
        return None, cache.rejected(what, why) if why else ""
    return loaded.arrays, ""


def save(model, kind: str, params: dict, cache_dir: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Store arrays for this analysis of this exact tensor; False if the cache is not writable."""
    try:
        key = cache.file_key(model, kind, params)
    except (OSError, cache.ExplorerError):
        return False
    return cache.save(Path(cache_dir), key, arrays)
