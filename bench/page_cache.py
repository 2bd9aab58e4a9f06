"""Bench scripts' cold start: drop a file from the page cache, so that its next reads come from
the disk."""

from __future__ import annotations

import os
from pathlib import Path


def drop_page_cache(path: Path) -> bool:
    """Evict the file's pages (Linux); False where that cannot be asked for."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True
