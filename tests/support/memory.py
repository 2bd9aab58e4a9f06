"""What the kernel says about this process's memory mappings (Linux)."""

from __future__ import annotations

from pathlib import Path


def mappings_of(path: str | Path) -> list[tuple[set[str], int]]:
    """(VmFlags, Rss in kB) of each memory mapping of `path` in this process (Linux smaps)."""
    found: list[tuple[set[str], int]] = []
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5] == str(path)
            if inside:
                found.append((set(), 0))
        elif inside and line.startswith("Rss:"):
            found[-1] = (found[-1][0], int(line.split()[1]))
        elif inside and line.startswith("VmFlags:"):
            found[-1] = (set(line.split()[1:]), found[-1][1])
    return found
