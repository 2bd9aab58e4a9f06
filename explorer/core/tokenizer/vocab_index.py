"""Prefix search over every token label, fast enough per keystroke on a 248k vocabulary.

Built once per model on a worker (sorting ~250k keys takes a fraction of a second); a query
is a binary search plus a short scan, independent of the vocabulary size.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.errors import TokenError
from explorer.core.limits import parse_hash_id
from explorer.core.tokenizer.short_holds import int_list

# Marks that start a word piece; "cat" should find "␣cat", "Ġcat", "▁cat" and "##cat" too.
_LEADING = ("␣", "▁", "Ġ", "##")
SCAN_LIMIT = 400  # candidates looked at per query before ranking
RUN = 4096  # keys sorted by one call of sorted(): a C sort holds the GIL (the window waits)


def search_key(label: str) -> str:
    key = label.casefold()
    for mark in _LEADING:
        if key.startswith(mark) and len(key) > len(mark):
            return key[len(mark) :]
    return key


@dataclass(frozen=True)
class Match:
    id: int
    label: str


def sorted_ids(labels: Sequence[str]) -> list[int]:
    """Ids ordered by their labels' search keys (ties: by id)."""
    keys = [search_key(label) for label in labels]
    # Short sorted runs merged in Python: one sort of 250k keys would hold the GIL for a third
    # of a second (the window, built on a worker, would freeze that long). Sorting ids by key
    # (stable: ties keep id order) makes no tuples, so no garbage-collector passes.
    at = keys.__getitem__
    runs = [sorted(range(s, min(s + RUN, len(keys))), key=at) for s in range(0, len(keys), RUN)]
    return list(heapq.merge(*runs, key=at))  # a Python generator: the GIL changes hands


class _KeysInOrder(Sequence[str]):
    """The search key at each sorted position, made when bisect or the scan asks for it."""

    def __init__(self, labels: Sequence[str], ids: list[int]):
        self._labels, self._ids = labels, ids
        self._made: dict[int, str] = {}  # the keys looked at so far (typing asks again)

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, pos):  # type: ignore[override]
        key = self._made.get(pos)
        if key is None:
            key = self._made[pos] = search_key(self._labels[self._ids[pos]])
        return key


class VocabIndex:
    def __init__(self, labels: Sequence[str], order: Sequence[int] | np.ndarray | None = None):
        """`order`: the ids already sorted by `sorted_ids` (made elsewhere, e.g. in the tokenizer's
        process); without it they are sorted here."""
        self.labels = labels
        if order is None:
            self._ids = sorted_ids(labels)
            self._keys: Sequence[str] = [search_key(labels[i]) for i in self._ids]
        else:
            self._ids = int_list(order)
            self._keys = _KeysInOrder(labels, self._ids)  # labels decode lazily: nothing up front

    def __len__(self) -> int:
        return len(self._ids)

    def search(self, query: str, limit: int = 50) -> list[Match]:
        """Tokens whose label starts with `query` (ignoring case and a leading space mark);
        '#123' finds id 123. Exact matches first, then shorter labels."""
        q = query.strip()
        if not q:
            return []
        try:
            i = parse_hash_id(q)
        except TokenError:  # more digits than any id has
            return []
        if i is not None:
            return [Match(i, self.labels[i])] if 0 <= i < len(self.labels) else []
        key = search_key(q)
        start = bisect.bisect_left(self._keys, key)
        found: list[int] = []
        for pos in range(start, min(start + SCAN_LIMIT, len(self._keys))):
            if not self._keys[pos].startswith(key):
                break
            found.append(self._ids[pos])
        exact_label = q.casefold()
        found.sort(
            key=lambda i: (
                self.labels[i].casefold() != exact_label,
                search_key(self.labels[i]) != key,
                len(self.labels[i]),
                i,
            )
        )
        return [Match(i, self.labels[i]) for i in found[:limit]]
