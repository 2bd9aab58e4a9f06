"""The merges a SentencePiece BPE vocabulary implies, found with array operations.

A piece made of two pieces merges them. Looking up both halves of every split of every piece in
a dict is a Python loop over all splits (1.2 M for Gemma 3's 262k pieces, ~2 s); here every
piece and every half is hashed at once (a polynomial hash of its code points, from prefix sums)
and looked up by binary search, and each match found is then compared code point by code point,
so the result is exactly the dict's. Should two pieces share a hash, the dict loop runs instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_BASE = 0x9E3779B97F4A7C15  # odd: invertible modulo 2**64, so a substring's hash can be shifted


def merge_ids(
    pieces: Sequence[str], ids: np.ndarray, scores: Sequence[float] | np.ndarray
) -> np.ndarray:
    """int64 [n, 2]: every (left id, right id) whose pieces join to a piece, ordered as
    SentencePiece ranks merges (higher-scored piece first, then piece id, left id, right id).
    `pieces` are distinct, `ids` their ids, `scores` indexed by id."""
    found = _splits(pieces, ids, _BASE)
    if found is None:  # two pieces share a hash (never seen in a real vocabulary)
        found = _splits_by_dict(pieces, ids)
    lefts, rights, owners = found
    rank = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)[owners]
    bits = max(1, int(max(ids.max(initial=0), 1)).bit_length())
    if 3 * bits <= 63:  # one key for (owner, left, right): a two-key sort is half the work
        order = np.lexsort((((owners << 2 * bits) | (lefts << bits)) | rights, -rank))
    else:
        order = np.lexsort((rights, lefts, owners, -rank))
    return np.stack([lefts[order], rights[order]], axis=1)


def _splits_by_dict(pieces: Sequence[str], ids: np.ndarray):
    """(left ids, right ids, owner ids) of every split whose halves are pieces: the plain loop."""
    get = dict(zip(pieces, ids.tolist(), strict=True)).get
    left: list[int] = []
    right: list[int] = []
    owner: list[int] = []
    for piece, i in zip(pieces, ids.tolist(), strict=True):
        for k in range(1, len(piece)):
            a = get(piece[:k])
            if a is not None:
                b = get(piece[k:])
                if b is not None:
                    left.append(a)
                    right.append(b)
                    owner.append(i)
    return tuple(np.array(x, dtype=np.int64) for x in (left, right, owner))


def _powers(base: int, n: int) -> np.ndarray:
    """base**0 … base**(n-1) modulo 2**64."""
    out = np.full(n, base, dtype=np.uint64)
    if n:
        out[0] = 1
    return np.cumprod(out, dtype=np.uint64)


def _splits(pieces: Sequence[str], ids: np.ndarray, base: int):
    """What `_splits_by_dict` finds, by hashing; None if two pieces' hashes are equal."""
    n = len(pieces)
    if n == 0:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(3))
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=n)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    text = "".join(pieces).encode("utf-32-le", "surrogatepass")
    chars = np.frombuffer(text, dtype=np.uint32).astype(np.uint64)
    with np.errstate(over="ignore"):
        # prefix[j] = sum over t < j of chars[t] * base**t; the hash of chars[s:e] is
        # (prefix[e] - prefix[s]) * base**-s, whatever s is
        prefix = np.zeros(len(chars) + 1, dtype=np.uint64)
        np.cumsum(chars * _powers(base, len(chars)), out=prefix[1:])
        unshift = _powers(pow(base, -1, 1 << 64), len(chars) + 1)

        def hashes(s: np.ndarray, e: np.ndarray) -> np.ndarray:
            return (prefix[e] - prefix[s]) * unshift[s]

        whole = hashes(starts, ends)
        lookup = _table(whole)
        if lookup is None:
            return None
        # every split k = 1 … len - 1 of every piece
        cuts = np.maximum(lengths - 1, 0)
        piece_of = np.repeat(np.arange(n), cuts)
        first_cut = np.cumsum(cuts) - cuts
        k = np.arange(len(piece_of), dtype=np.int64) - first_cut[piece_of] + 1
        s, e = starts[piece_of], ends[piece_of]
        m = s + k

        left = lookup(hashes(s, m))
        keep = left >= 0
        right = np.full(len(left), -1, dtype=np.int64)
        right[keep] = lookup(hashes(m[keep], e[keep]))
        keep &= right >= 0
    kept = np.flatnonzero(keep)
    left, right, piece_of, s, m, k = (x[kept] for x in (left, right, piece_of, s, m, k))
    rest = lengths[piece_of] - k
    if not (
        np.array_equal(lengths[left], k)
        and np.array_equal(lengths[right], rest)
        and _same(chars, starts[left], s, k)
        and _same(chars, starts[right], m, rest)
    ):
        return None  # a hash matched other code points
    return ids[left].astype(np.int64), ids[right].astype(np.int64), ids[piece_of].astype(np.int64)


_MIX = 0x9FB21C651E98DF25  # Fibonacci hashing: the top bits of hash × this pick a slot


def _table(hashes: np.ndarray):
    """A lookup hash -> index into `hashes` (-1 where absent), through a table of slots picked
    by the hash's mixed top bits (one random read per query, where a binary search makes 18);
    queries whose slot several hashes share are binary-searched. None if two hashes are equal."""
    n = len(hashes)
    order = np.argsort(hashes)
    ordered = hashes[order]
    if (ordered[1:] == ordered[:-1]).any():
        return None
    bits = max(4, int(4 * n).bit_length())
    shift = np.uint64(64 - bits)

    def slot_of(h: np.ndarray) -> np.ndarray:
        return ((h * np.uint64(_MIX)) >> shift).astype(np.int64)

    slots = slot_of(hashes)
    table = np.full(1 << bits, -1, dtype=np.int64)
    shared = np.bincount(slots, minlength=1 << bits) > 1
    table[slots] = np.arange(n)
    table[shared] = -2

    def lookup(h: np.ndarray) -> np.ndarray:
        found = table[slot_of(h)]
        found = np.where((found >= 0) & (hashes[np.maximum(found, 0)] != h), -1, found)
        crowded = np.flatnonzero(found == -2)
        if len(crowded):
            at = np.minimum(np.searchsorted(ordered, h[crowded]), n - 1)
            found[crowded] = np.where(ordered[at] == h[crowded], order[at], -1)
        return found

    return lookup


def _same(chars: np.ndarray, a: np.ndarray, b: np.ndarray, size: np.ndarray) -> bool:
    """Whether chars[a[i] : a[i] + size[i]] == chars[b[i] : b[i] + size[i]] for every i."""
    total = int(size.sum())
    if not total:
        return True
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
    here, there = np.repeat(a, size) + offset, np.repeat(b, size) + offset
    return bool(np.array_equal(chars[here], chars[there]))


def pair_strings(tokens: Sequence[str], pairs: np.ndarray) -> list[tuple[str, str]]:
    """Merges as pairs of pieces (`pairs`: ids into `tokens`). Taking a million pieces by id one
    at a time reaches each string object at random (a quarter of a second for Gemma 3's merges);
    here their code points are gathered into one buffer, decoded once and split on NULs."""
    text = "".join(tokens)
    if "\0" in text:  # a piece holding NUL cannot be split on it
        return [(tokens[a], tokens[b]) for a, b in pairs.tolist()]
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    starts = np.cumsum(lengths) - lengths
    chars = np.frombuffer(text.encode("utf-32-le", "surrogatepass") + b"\0\0\0\0", np.uint32)
    order = pairs.reshape(-1)  # left, right, left, right, …
    size = lengths[order] + 1  # each piece and a NUL
    ends = np.cumsum(size)
    offset = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) - np.repeat(
        ends - size, size
    )
    gathered = chars[np.repeat(starts[order], size) + offset]
    gathered[ends - 1] = 0
    split = gathered.tobytes().decode("utf-32-le", "surrogatepass").split("\0")[:-1]
    halves = iter(split)
    return list(zip(halves, halves, strict=True))
