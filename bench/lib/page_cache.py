"""Bench scripts' cold start: drop a file from the page cache, so that its next reads come from
the disk, and ask which rows of a matrix in it are still cold (`Residency`).

On a VM whose kernel reports free pages to the hypervisor (virtio-balloon free page reporting),
evicting a whole 2 GB file frees pages by the gigabyte, and the kernel then hands them to the host
384 MiB at a time, every ~2.2 s, for ~10 s: on the reference VM a process beside it ran 10-30x
slower during some of those passes. `settle_reporting` waits for them to end. (Evicting only a
few rows does not make them cold there: the page cache holds the file in 2 MB folios, and a
POSIX_FADV_DONTNEED range smaller than a folio leaves it cached.)
"""

from __future__ import annotations

import ctypes
import mmap
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPORTED = Path("/sys/module/page_reporting/parameters/reported_kib")


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


class Residency:
    """Which rows of a safetensors file's matrix have a page outside the page cache now: the
    kernel's mincore() over a map of the file that is never read (so it faults nothing in).
    A few microseconds a row."""

    def __init__(self, path: Path):
        from explorer.core.model.formats.safetensors import SafetensorsFile

        matrix = max(  # the embedding: the largest 2-D tensor
            (t for t in SafetensorsFile(path).tensors.values() if len(t.shape) == 2),
            key=lambda t: t.nbytes,
        )
        self.first, self.rows = matrix.begin, matrix.shape[0]
        self.row_bytes = matrix.nbytes // self.rows
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        self._address = np.frombuffer(self._map, np.uint8).ctypes.data
        self._pages = (ctypes.c_ubyte * (self.row_bytes // mmap.PAGESIZE + 2))()
        self._mincore = ctypes.CDLL(None, use_errno=True).mincore
        self._mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

    def is_cold(self, row: int) -> bool:
        """True if a page holding a byte of this row is not in the page cache."""
        start = self.first + row * self.row_bytes
        first, last = start // mmap.PAGESIZE, (start + self.row_bytes - 1) // mmap.PAGESIZE
        pages = last - first + 1
        at = self._address + first * mmap.PAGESIZE
        if self._mincore(at, pages * mmap.PAGESIZE, self._pages) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        return any(not page & 1 for page in self._pages[:pages])


def reported_kib() -> Callable[[], float]:
    """A reader of the KiB of free memory the kernel has reported to the hypervisor so far;
    it reads -1 where the kernel has no such counter."""
    try:
        fd = os.open(REPORTED, os.O_RDONLY)
    except OSError:
        return lambda: -1.0
    return lambda: float(os.pread(fd, 32, 0))


def settle_reporting(quiet: float = 3.0, limit: float = 30.0) -> float:
    """Wait until no free memory has been reported to the hypervisor for `quiet` seconds (at most
    `limit` seconds); the MiB reported meanwhile (-1 where the kernel does not say)."""
    reported = reported_kib()
    first = last = reported()
    if first < 0:
        return -1.0
    changed = start = time.monotonic()
    while time.monotonic() - changed < quiet and time.monotonic() - start < limit:
        time.sleep(0.1)
        now = reported()
        if now != last:
            last, changed = now, time.monotonic()
    return (last - first) / 1024
