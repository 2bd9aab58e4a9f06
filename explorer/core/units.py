"""One way to write a size everywhere (CLI, window, model lists): 1 MB = 10^6 bytes."""

from __future__ import annotations


def human_size(n: int) -> str:
    """123 bytes, 45.6 kB, 56.6 MB, 2.03 GB: three significant digits from a kilobyte up."""
    if n < 1000:
        return f"{n} byte{'s' if n != 1 else ''}"
    size = float(n)
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        size /= 1000
        if size < 999.5 or unit == "PB":
            return f"{size:.3g} {unit}"
    return f"{n} bytes"


def short_source(source: str | None) -> str:
    """Where a tokenizer came from, short: a file's name, or the builder's own words."""
    if not source:
        return "-"
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    return name if source.endswith(".json") else source
