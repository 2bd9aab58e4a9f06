"""Big Python containers built without holding the GIL for long (worker threads of the window).

One C call over a whole vocabulary (``ndarray.tolist()`` of 248k values: 10-13 ms; a dict of
248k keys growing: each resize rehashes every key, 12-14 ms) holds the GIL throughout, and the
GUI thread waits that long for it. Here the same containers are made a run at a time, or split
so that no single step grows with the vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RUN = 8192  # values per C call: well under a millisecond each


def int_list(values: np.ndarray | Sequence[int], run: int = RUN) -> list[int]:
    """``values.tolist()`` as Python ints, converted a run at a time."""
    values = np.asarray(values)
    out: list[int] = []
    for at in range(0, len(values), run):
        out.extend(values[at : at + run].tolist())
    return out


class FirstWins:
    """{key: the first id given with it}, looked up with ``get``, kept in SHARDS dicts chosen by
    the key's hash, so that the growth of any one dict rehashes at most a 1/SHARDS part of it."""

    SHARDS = 32

    def __init__(self) -> None:
        self._shards: list[dict[bytes, int]] = [{} for _ in range(self.SHARDS)]

    def add(self, keys: Sequence[bytes], ids: Sequence[int], overwrite: bool = False) -> None:
        """Add each key with the first of its ids; `overwrite`: over the ids held before."""
        shards, n = self._shards, self.SHARDS
        if overwrite:  # last first, so that the first id of a key is written last
            for key, i in zip(reversed(keys), reversed(ids), strict=True):
                shards[hash(key) % n][key] = i
        else:
            for key, i in zip(keys, ids, strict=True):
                shards[hash(key) % n].setdefault(key, i)

    def get(self, key: bytes, default: int | None = None) -> int | None:
        return self._shards[hash(key) % self.SHARDS].get(key, default)

    def __len__(self) -> int:
        return sum(len(s) for s in self._shards)

    def as_dict(self) -> dict[bytes, int]:
        return {k: v for s in self._shards for k, v in s.items()}
