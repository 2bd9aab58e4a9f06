"""Peak anonymous memory of this process while a block runs, sampled from /proc (Linux).

Anonymous memory is what a computation allocates; a memory-mapped model file's pages are file
backed and do not count (the kernel can drop them)."""

from __future__ import annotations

import threading
from pathlib import Path


def rss_anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakAnon:
    """`with PeakAnon() as peak: ...` then `peak.mb` (the highest sample, every `every` s) and
    `peak.base_mb` (at the start)."""

    def __init__(self, every: float = 0.02):
        self.every = every
        self.mb = self.base_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.mb = max(self.mb, rss_anon_mb())

    def __enter__(self) -> PeakAnon:
        self.base_mb = self.mb = rss_anon_mb()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.mb = max(self.mb, rss_anon_mb())
