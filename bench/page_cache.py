"""Bench scripts' cold start: drop a file (or some rows of a matrix in it) from the page cache,
so that their next reads come from the disk.

On a VM whose kernel reports free pages to the hypervisor (virtio-balloon free page reporting),
evicting a whole 2 GB file frees pages by the gigabyte, and the kernel then hands them to the host
384 MiB at a time, every ~2.2 s, for ~10 s: on the reference VM a process beside it ran 10-30x
slower during some of those passes. `settle_reporting` waits for them to end; `drop_rows` makes
rows cold without freeing whole blocks (scattered pages are not reported).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import time
from collections.abc import Callable, Iterable
from pathlib import Path

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


def matrix_rows(path: Path) -> tuple[int, int]:
    """(file offset of row 0, bytes per row) of the largest 2-D tensor of a safetensors file."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    name = max(
        (n for n, t in header.items() if len(t["shape"]) == 2),
        key=lambda n: header[n]["data_offsets"][1] - header[n]["data_offsets"][0],
    )
    begin, end = header[name]["data_offsets"]
    return 8 + length + begin, (end - begin) // header[name]["shape"][0]


def drop_rows(path: Path, rows: Iterable[int]) -> bool:
    """Evict every page that holds a byte of these rows of the file's matrix, and no other."""
    if not hasattr(os, "posix_fadvise"):
        return False
    first, row_bytes = matrix_rows(path)
    page = mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        for row in rows:
            start = first + row * row_bytes
            begin = start - start % page  # fadvise keeps a page only partly in its range
            end = -(-(start + row_bytes) // page) * page
            os.posix_fadvise(fd, begin, end - begin, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


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
