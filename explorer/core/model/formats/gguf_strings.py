"""A GGUF header's long string arrays (the vocabulary), found without walking them again and
decoded when first read.

Where each string of an array starts follows from walking it: a Python loop over every
string (262,144 for Gemma 3), the largest part of opening such a file. The first open walks it
and keeps the starts, a CRC-32 of the array's bytes and whether its strings are all distinct in
the user cache (keyed by the file's path, size and modification time and the array's place).
A later open takes the starts from there only after checking them against the file (every
start must be where the previous string ends, the last string where the array ends, and the
CRC must match), so a stale or damaged entry is never used: the array is walked again and the
entry rewritten. The strings themselves are decoded on first use: `info` needs only how many
there are and whether any repeats.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import overload

import numpy as np

KIND = "gguf-strings"
VERSION = 1
LONG = 4096  # arrays with at least this many strings are kept in the cache and decoded lazily


class StringArray(Sequence[str]):
    """The strings of a GGUF string array: `region` holds each one's 8-byte length and bytes,
    `starts` where each length is; decoded all at once when first needed as a whole."""

    def __init__(self, region: bytes, starts: np.ndarray, distinct: bool | None = None):
        self.region, self.starts = region, starts
        self.distinct = distinct  # all strings differ (None: not known yet)

    @cached_property
    def strings(self) -> list[str]:
        from explorer.core.model.formats.gguf import decode_strings

        return decode_strings(self.region, self.starts)

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice) or "strings" in vars(self):
            return self.strings[i]
        n = len(self.starts)
        if not -n <= i < n:
            raise IndexError(i)
        at = int(self.starts[i % n])
        size = int.from_bytes(self.region[at : at + 8], "little")
        return self.region[at + 8 : at + 8 + size].decode("utf-8", "replace")

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self.strings)

    def __contains__(self, value: object) -> bool:
        return value in self.strings

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StringArray | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def chain_ok(data, first: int, starts: np.ndarray, end: int) -> bool:
    """Whether strings whose lengths are at `starts` (relative to `first`) follow one another
    from `first` and the last ends at `end`: each start is the previous one plus 8 plus the
    length written there."""
    if not len(starts) or starts[0] != 0 or end > len(data) - first:
        return False
    if (np.diff(starts) < 8).any() or starts[-1] + 8 > end:
        return False
    region = np.frombuffer(data, dtype=np.uint8, count=end, offset=first)
    at = starts[:, None] + np.arange(8)
    lengths = region[at].copy().view("<u8").reshape(-1)
    nexts = starts + 8 + lengths.astype(np.int64)
    return bool((lengths < 1 << 40).all() and (nexts[:-1] == starts[1:]).all() and nexts[-1] == end)


class Layouts:
    """The cached starts of one file's long string arrays: read when the file is opened, and
    written back (all arrays of the file in one entry) when one had to be walked."""

    def __init__(self, path: Path, root: Path | None = None):
        self.path, self.root = path, root
        self.seen: dict[int, StringArray] = {}  # array offset -> its strings, this open
        self.walked = False

    @cached_property
    def _key(self) -> dict | None:
        try:
            resolved = self.path.resolve()
            st = resolved.stat()
        except OSError:
            return None
        return {
            "kind": KIND,
            "version": VERSION,
            "file": str(resolved),
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
        }

    def _root(self) -> Path:
        from explorer.core import cache

        return self.root if self.root is not None else cache.default_cache_dir()

    @cached_property
    def _entry(self) -> tuple[dict[str, np.ndarray], dict] | None:
        from explorer.core import cache

        if self._key is None:
            return None
        meta = cache.read_meta(cache.key_dir(self._root(), self._key))
        described = (meta or {}).get("extra", {}).get("arrays")
        if not isinstance(described, dict):
            return None
        try:
            specs = {
                f"at{int(at)}": cache.ArraySpec("<i8", (int(facts["count"]),))
                for at, facts in described.items()
            }
        except (TypeError, ValueError, KeyError):
            return None
        found, _ = cache.load(self._root(), self._key, specs)
        return None if found is None else (found.arrays, described)

    def known(self, data, first: int, count: int) -> StringArray | None:
        """The array at `first` from the cache, checked against `data`; None if not there."""
        entry = self._entry
        facts = entry[1].get(str(first)) if entry is not None else None
        if entry is None or not isinstance(facts, dict) or facts.get("count") != count:
            return None
        end, crc, distinct = (facts.get(k) for k in ("end", "crc32", "distinct"))
        if not (isinstance(end, int) and isinstance(crc, int) and isinstance(distinct, bool)):
            return None
        starts = entry[0][f"at{first}"]
        if not chain_ok(data, first, starts, end):
            return None
        region = bytes(data[first : first + end])
        if zlib.crc32(region) != crc:
            return None
        self.seen[first] = found = StringArray(region, starts, distinct)
        return found

    def walked_array(self, first: int, strings: StringArray) -> None:
        self.seen[first] = strings
        self.walked = True

    def save(self) -> None:
        """Write the file's long arrays if one was walked (best effort: a read-only cache is
        no error). Their strings are decoded now, to record whether any repeats."""
        from explorer.core import cache

        if not self.walked or self._key is None:
            return
        described = {}
        for first, strings in self.seen.items():
            decoded = strings.strings
            strings.distinct = len(set(decoded)) == len(decoded)
            described[str(first)] = {
                "count": len(strings),
                "end": len(strings.region),
                "crc32": zlib.crc32(strings.region),
                "distinct": strings.distinct,
            }
        arrays = {f"at{first}": s.starts for first, s in self.seen.items()}
        cache.save(self._root(), self._key, arrays, {"arrays": described})


def distinct(tokens: Sequence[str]) -> bool:
    """Whether no string repeats (from the cache when `tokens` came from it)."""
    known = getattr(tokens, "distinct", None)
    if isinstance(known, bool):
        return known
    return len(set(tokens)) == len(tokens)
