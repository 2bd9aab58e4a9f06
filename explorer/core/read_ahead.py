"""Read a memory-mapped model's rows into the page cache without holding the GIL.

A thread that copies rows out of a memory map (numpy fancy indexing) takes its page faults while
holding the GIL: on a cold file (or a disk busy with the index builder) each fault waits for the
disk, and in the window every other thread, the GUI thread included, waits with it.
``os.pread`` of the same bytes waits for the disk with the GIL released; the copy that follows
then finds the pages in memory. Used where the window reads a few cold rows (lookups, the colour
range, a map's rows), not in the neighbour search's re-rank of rows that are usually warm.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable

import numpy as np

MAX_READ_AHEAD = 64 << 20  # bytes read ahead per call at most: a large request just faults


def _mapped_file(matrix: np.ndarray) -> tuple[str, int] | None:
    """(file name, file offset of matrix[0]) of a row-contiguous view of a np.memmap."""
    base: object = matrix
    while base is not None and not isinstance(getattr(base, "_mmap", None), mmap.mmap):
        base = getattr(base, "base", None)
    filename = getattr(base, "filename", None)
    if base is None or not filename or not isinstance(base, np.ndarray):
        return None
    start = matrix.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return str(filename), int(getattr(base, "offset", 0)) + start


def read_ahead(matrix: np.ndarray, ids: Iterable[int]) -> int:
    """Bring rows `ids` of `matrix` into the page cache (worker thread); returns bytes read.
    Does nothing for arrays that are not a memory map with contiguous rows."""
    if matrix.ndim != 2 or not matrix[:1].flags.c_contiguous or matrix.strides[0] <= 0:
        return 0
    where = _mapped_file(matrix)
    if where is None:
        return 0
    filename, first = where
    row = matrix.strides[0]
    rows = sorted({int(i) for i in ids if 0 <= int(i) < matrix.shape[0]})
    if not rows or len(rows) * row > MAX_READ_AHEAD:
        return 0
    done = 0
    fd = os.open(filename, os.O_RDONLY)
    try:
        for i in rows:
            done += len(os.pread(fd, row, first + i * row))
    finally:
        os.close(fd)
    return done
