"""NN-descent's compiled steps for unit rows, cosine distance (1 - dot) inlined, in numba's disk
cache (`explorer.core.map.umap.configure_numba_cache` sets its folder before this is imported).

pynndescent's kernels take the distance function as an argument, which numba cannot cache, so
every new process compiled them again: about 20 s on two cores, eight times the work itself.
The steps are pynndescent's (random-projection forest, heaps of the k nearest found so far,
new/old candidates with reverse neighbours, local join); the parallel ones are written so that
each row's heap has one writer, which also makes the result independent of thread timing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from explorer.core.map.umap_kernel import next_random as _random

_INF = np.float32(np.inf)


@njit(cache=True, nogil=True, fastmath=True, inline="always")
def _dist(data, i, j):
    s = np.float32(0.0)
    for t in range(data.shape[1]):
        s += data[i, t] * data[j, t]
    return np.float32(1.0) - s


@njit(cache=True, nogil=True, inline="always")
def _mix(seed, i):
    """splitmix64 of seed + i: a pseudo-random 64-bit integer for item i, whatever thread asks."""
    x = np.uint64(seed) + np.uint64(i) * np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def _push(ids, keys, flags, row, key, item, flag):
    """Put `item` into row's max-heap of the smallest keys unless it is there or too far; 1 if
    it went in."""
    size = ids.shape[1]
    if key >= keys[row, 0]:
        return 0
    for t in range(size):
        if ids[row, t] == item:
            return 0
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[row, left + 1] > keys[row, left]:
            child = left + 1
        if keys[row, child] <= key:
            break
        ids[row, pos] = ids[row, child]
        keys[row, pos] = keys[row, child]
        flags[row, pos] = flags[row, child]
        pos = child
    ids[row, pos] = item
    keys[row, pos] = key
    flags[row, pos] = flag
    return 1


# -- the random-projection forest ------------------------------------------------------------


@njit(cache=True, nogil=True, fastmath=True)
def _tree(data, sketch, full_below, leaf_size, max_depth, seed, order, bounds):
    """One angular random-projection tree: `order` becomes a permutation of the rows in which
    every leaf is contiguous, and bounds[i] the (start, end) of row i's leaf in it. A node is
    split by the hyperplane between two of its rows; when that leaves one side empty (duplicate
    rows) or the tree is max_depth deep, it is split in half. Nodes of full_below rows or more
    are split by the rows' `sketch` (a random projection): at those levels every row is read
    from memory rather than the processor's caches, so fewer bytes are read there."""
    n = data.shape[0]
    dim = max(data.shape[1], sketch.shape[1])
    state = np.array([np.uint64(seed) | np.uint64(1)], dtype=np.uint64)
    for i in range(n):
        order[i] = i
    normal = np.empty(dim, dtype=np.float32)
    stack = np.empty((n + 1, 3), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 0
    top = 1
    while top > 0:
        top -= 1
        start, end, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        size = end - start
        if size <= leaf_size:
            for p in range(start, end):
                bounds[order[p], 0] = start
                bounds[order[p], 1] = end
            continue
        mid = start + size // 2
        if depth < max_depth:
            rows = sketch if size >= full_below else data
            width = rows.shape[1]
            a = order[start + int(_random(state) % np.uint64(size))]
            b = order[start + int(_random(state) % np.uint64(size - 1))]
            if b == a:
                b = order[end - 1]
            for t in range(width):
                normal[t] = rows[a, t] - rows[b, t]
            lo, hi = start, end - 1
            while lo <= hi:
                row = order[lo]
                m = np.float32(0.0)
                for t in range(width):
                    m += rows[row, t] * normal[t]
                if m > 0 or (m == 0 and (_random(state) & np.uint64(1)) == 1):
                    lo += 1
                else:
                    order[lo] = order[hi]
                    order[hi] = row
                    hi -= 1
            if start < lo < end:
                mid = lo
        stack[top, 0], stack[top, 1], stack[top, 2] = start, mid, depth + 1
        stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = mid, end, depth + 1
        top += 2


@njit(cache=True, nogil=True, parallel=True)
def forest(data, sketch, full_below, n_trees, leaf_size, max_depth, seeds):
    """n_trees random-projection trees (see _tree), built in parallel: order [trees, n] and
    bounds [trees, n, 2]."""
    n = data.shape[0]
    order = np.empty((n_trees, n), dtype=np.int32)
    bounds = np.empty((n_trees, n, 2), dtype=np.int32)
    for t in prange(n_trees):
        _tree(data, sketch, full_below, leaf_size, max_depth, seeds[t], order[t], bounds[t])
    return order, bounds


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def init_from_tree(data, order, bounds, ids, keys, flags):
    """Every pair of rows that share a leaf of one tree goes into both rows' heaps. Leaves of a
    tree are disjoint, so each leaf's rows are written by one thread."""
    n = order.shape[0]
    starts = np.empty(n, dtype=np.int64)
    count, p = 0, 0
    while p < n:
        starts[count] = p
        count += 1
        p = bounds[order[p], 1]
    for leaf in prange(count):
        start = starts[leaf]
        end = bounds[order[start], 1]
        for x in range(start, end):
            a = order[x]
            for y in range(x + 1, end):
                b = order[y]
                d = _dist(data, a, b)
                _push(ids, keys, flags, a, d, b, 1)
                _push(ids, keys, flags, b, d, a, 1)


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def fill_random(data, ids, keys, flags, seed):
    """Rows whose heap still has empty places get random rows."""
    n, size = ids.shape
    for i in prange(n):
        if ids[i, 0] >= 0:
            continue
        state = np.array([_mix(seed, i) | np.uint64(1)])  # (xorshift: never 0)
        for _ in range(4 * size):
            j = int(_random(state) % np.uint64(n))
            if j != i:
                _push(ids, keys, flags, i, _dist(data, i, j), j, 1)
            if ids[i, 0] >= 0:
                break


# -- one NN-descent iteration ----------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _priority(seed, i):
    """A pseudo-random number in [0, 1) for entry i: the same whatever thread draws it."""
    return np.float32(_mix(seed, i) >> np.uint64(40)) * np.float32(2.0**-24)


@njit(cache=True, nogil=True, parallel=True)
def candidates(ids, flags, new_ids, new_pri, old_ids, old_pri, scratch, seed, parts):
    """Each row's candidates for the local join: its neighbours and the rows that have it as a
    neighbour, sampled to max_candidates by random priority, as new (not joined yet) or old.
    The new ones chosen are then marked old in the heap. The rows are split into `parts`
    ranges, each filled by one thread from every entry that names one of its rows.
    (`scratch`: flags the samples do not use, shaped as new_ids.)"""
    n, size = ids.shape
    for part in prange(parts):
        lo, hi = part * n // parts, (part + 1) * n // parts
        new_ids[lo:hi] = -1
        old_ids[lo:hi] = -1
        new_pri[lo:hi] = _INF
        old_pri[lo:hi] = _INF
        for i in range(n):
            mine = lo <= i < hi
            for t in range(size):
                j = ids[i, t]
                if j < 0 or not (mine or lo <= j < hi):
                    continue
                pri = _priority(seed, i * size + t)
                chosen, chosen_pri = (new_ids, new_pri) if flags[i, t] else (old_ids, old_pri)
                if mine:
                    _push(chosen, chosen_pri, scratch, i, pri, j, 0)
                if lo <= j < hi:
                    _push(chosen, chosen_pri, scratch, j, pri, i, 0)
    for i in prange(n):
        for t in range(size):
            if flags[i, t]:
                j = ids[i, t]
                for c in range(new_ids.shape[1]):
                    if new_ids[i, c] == j:
                        flags[i, t] = 0
                        break


@njit(cache=True, nogil=True, parallel=True, fastmath=True)
def join(data, keys, new_ids, old_ids, start, end, pairs, found, counts):
    """The local join of rows start .. end - 1: for every row, each pair of its candidates with
    at least one new is compared, and the pairs closer than either end's farthest neighbour so
    far are written to `pairs` [chunks, capacity, 2] and their distances to `found` [chunks,
    capacity], one chunk of rows per thread. The heaps are only read here."""
    chunks = found.shape[0]
    span = (end - start + chunks - 1) // chunks
    width = new_ids.shape[1]
    for c in prange(chunks):
        count = 0
        for u in range(start + c * span, min(end, start + (c + 1) * span)):
            for a in range(width):
                p = new_ids[u, a]
                if p < 0:
                    continue
                for b in range(a + 1, width + old_ids.shape[1]):
                    q = new_ids[u, b] if b < width else old_ids[u, b - width]
                    if q < 0 or q == p:
                        continue
                    d = _dist(data, p, q)
                    if d < keys[p, 0] or d < keys[q, 0]:
                        pairs[c, count, 0] = p
                        pairs[c, count, 1] = q
                        found[c, count] = d
                        count += 1
        counts[c] = count


@njit(cache=True, nogil=True, parallel=True)
def apply(pairs, found, counts, ids, keys, flags, parts):
    """Push every pair found by `join` into both rows' heaps: the rows are split into `parts`
    ranges, each updated by one thread in the order found. Returns how many pushes took."""
    n = ids.shape[0]
    changed = np.zeros(parts, dtype=np.int64)
    for part in prange(parts):
        lo, hi = part * n // parts, (part + 1) * n // parts
        c = 0
        for chunk in range(found.shape[0]):
            for e in range(counts[chunk]):
                p, q, d = pairs[chunk, e, 0], pairs[chunk, e, 1], found[chunk, e]
                if lo <= p < hi:
                    c += _push(ids, keys, flags, p, d, q, 1)
                if lo <= q < hi:
                    c += _push(ids, keys, flags, q, d, p, 1)
        changed[part] = c
    return changed.sum()
