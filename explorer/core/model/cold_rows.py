"""Read a few rows of a memory-mapped model with ``os.pread``: what a cold row costs is the disk.

A page fault in the memory map reads ahead around the faulting page, synchronously: a cold row
of the 248320 x 4096 BF16 matrix took 9-20 ms copied out of the map and ~1 ms with ``os.pread``,
256 scattered rows 1.3 s against 37 ms (bench/cold_rows.py). ``os.pread`` also waits with the
GIL released, and its bytes are the rows: nothing touches the map afterwards. Used where the
window reads a few rows that may be cold (lookups, the colour range, a map's rows).

The neighbour search's re-rank gathers a few hundred scattered rows in a compiled kernel, from
``random_access_map``: the same bytes mapped again with ``MADV_RANDOM``, so that a fault reads
the pages it touches and not the disk's read-ahead around them (128 kB on a desktop disk, 8 MB on
some virtual machines' disks: there one re-rank of 566 cold rows read 1.3 GB of a 2 GB file).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Sequence

import numpy as np

from explorer.core.errors import ModelChangedError, ModelFormatError
from explorer.core.filecheck import mapped_base, open_regular

MAX_READ = 64 << 20  # bytes read per call at most: more rows than that are copied from the map
# Matrices from this size on get a random-access map: below it, the read-ahead that a re-rank's
# faults bring in is a small file's larger part, and reading it whole is quicker
# (bench/cold_rows.py, a cold re-rank of 566 rows: SmolLM2's 57 MB, 24 ms as mapped, 114 ms page
# by page; the 2 GB matrix, 1380 ms and 1.3 GB read as mapped, 201 ms and 5.6 MB page by page).
RANDOM_ACCESS_BYTES = 256 << 20


def _mapped_file(matrix: np.ndarray) -> tuple[str, int, mmap.mmap] | None:
    """(file name, file offset of matrix[0], the map) of a view of a np.memmap."""
    base = mapped_base(matrix)
    filename = getattr(base, "filename", None)
    if base is None or not filename:
        return None
    mm: mmap.mmap = base._mmap  # type: ignore[attr-defined]
    offset = int(getattr(base, "offset", 0))  # numpy maps from the granularity below it
    map_start = np.frombuffer(mm, dtype=np.uint8).__array_interface__["data"][0]
    here = matrix.__array_interface__["data"][0] - map_start
    return str(filename), offset - offset % mmap.ALLOCATIONGRANULARITY + here, mm


def random_access_map(matrix: np.ndarray, min_bytes: int | None = None) -> np.ndarray:
    """`matrix` mapped again from its file with ``MADV_RANDOM`` (a separate mapping: the whole-
    matrix scans keep their read-ahead); `matrix` itself where that cannot be made (not a map of
    contiguous rows, smaller than `min_bytes` (default RANDOM_ACCESS_BYTES), the file changed,
    no madvise on this system)."""
    if not hasattr(mmap, "MADV_RANDOM") or matrix.ndim < 2 or not matrix.flags.c_contiguous:
        return matrix
    if matrix.nbytes < (RANDOM_ACCESS_BYTES if min_bytes is None else min_bytes):
        return matrix
    where = _mapped_file(matrix)
    if where is None:
        return matrix
    filename, first, mm = where
    try:
        with open_regular(filename) as f:  # a FIFO put in its place must not block
            if os.fstat(f.fileno()).st_size != mm.size():  # replaced or cut since it was mapped
                return matrix
            scattered = np.memmap(f, dtype=matrix.dtype, mode="r", offset=first, shape=matrix.shape)
        scattered._mmap.madvise(mmap.MADV_RANDOM)  # type: ignore[attr-defined]
    except (OSError, ValueError, ModelFormatError):
        return matrix
    return scattered


def read_rows(matrix: np.ndarray, ids: Sequence[int]) -> np.ndarray | None:
    """``matrix[ids]`` read from the file (worker thread), ids already checked to be in range;
    None if `matrix` is not a memory map with contiguous rows (or the rows are too many)."""
    if matrix.ndim < 2 or not matrix[:1].flags.c_contiguous or matrix.strides[0] <= 0:
        return None
    row = matrix.strides[0]
    if row != matrix[0].nbytes or len(ids) * row > MAX_READ:
        return None
    where = _mapped_file(matrix)
    if where is None:
        return None
    filename, first, mm = where
    out = np.empty((len(ids), *matrix.shape[1:]), dtype=matrix.dtype)
    into = out.view(np.uint8).reshape(len(ids), row)
    with open_regular(filename) as f:  # a FIFO put in its place must not block
        fd = f.fileno()
        changed = os.fstat(fd).st_size != mm.size()  # replaced or cut since it was mapped
        for k, i in enumerate(ids):
            if changed or os.preadv(fd, [into[k]], first + int(i) * row) < row:
                raise ModelChangedError(
                    f"{os.path.basename(filename)}: model file changed on disk while reading; "
                    "reopen it"
                )
    return out
