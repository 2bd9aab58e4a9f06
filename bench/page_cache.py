"""Bench scripts' cold start: drop a file from the page cache, so that its next reads come from
the disk.

On a VM whose kernel reports free pages to the hypervisor (virtio-balloon free page reporting),
evicting a whole 2 GB file frees pages by the gigabyte, and the kernel then hands them to the host
384 MiB at a time, every ~2.2 s, for ~10 s: on the reference VM a process beside it ran 10-30x
slower during some of those passes. `settle_reporting` waits for them to end. (Evicting only a
few rows does not make them cold there: the page cache holds the file in 2 MB folios, and a
POSIX_FADV_DONTNEED range smaller than a folio leaves it cached.)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
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
