"""Prefix search over every token label, fast enough per keystroke on a 248k vocabulary.

Built once per model on a worker (sorting ~250k keys takes a fraction of a second); a query
is a binary search plus a short scan, independent of the vocabulary size.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.core.errors import TokenError
from explorer.core.limits import parse_hash_id

# Marks that start a word piece; "cat" should find "␣cat", "Ġcat", "▁cat" and "##cat" too.
_LEADING = ("␣", "▁", "Ġ", "##")
SCAN_LIMIT = 400  # candidates looked at per query before ranking


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


class VocabIndex:
    def __init__(self, labels: Sequence[str]):
        self.labels = labels
        order = sorted(range(len(labels)), key=lambda i: (search_key(labels[i]), i))
        self._keys = [search_key(labels[i]) for i in order]
        self._ids = order

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
