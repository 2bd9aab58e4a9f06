"""Sign codes of centred unit rows, and the Hamming scans that rank rows by them.

A row's direction x̂ = x/|x| is split into its part along the matrix's mean direction u and the
rest: x̂ = a·u + w (w ⊥ u). w is rotated by randomised Hadamard transforms (random signs, then
a fast Walsh–Hadamard transform; one rotation per block of D = 2^k ≥ dim bits) and only the
sign of each rotated coordinate is kept.  For two rows the fraction h/B of differing bits
estimates the angle between their w parts (SimHash), so

    cos(q, x) ≈ a_q·a_x + |w_q|·|w_x|·cos(π·h/B)

uses every dimension of the row, unlike a low-dimensional PCA sketch, which on real embedding
matrices (slowly decaying spectra) keeps too little of the variance to find true neighbours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numba import get_num_threads, njit, prange, types
from numba.extending import intrinsic

from explorer.core.ranking import top_unordered
from explorer.core.search.exact import KERNEL_LOCK


@intrinsic
def _ctpop(typingctx, x):  # pragma: no cover - compiled
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


# The bits set in a uint64, for compiled code; typed as what compiled callers see.
_popcount = cast(Callable[[Any], int], _ctpop)


@njit(cache=True, nogil=True)
def _fwht(v):  # pragma: no cover - compiled
    """In-place orthonormal-up-to-scale Walsh–Hadamard transform (len(v) a power of two ≥ 4).

    The first two butterfly stages run fused in registers; the later ones work on two
    contiguous halves, which vectorise (4-5× faster than one generic loop for 4096 values).
    """
    n = v.shape[0]
    for i in range(0, n, 4):
        a0, a1, a2, a3 = v[i], v[i + 1], v[i + 2], v[i + 3]
        b0, b1, b2, b3 = a0 + a1, a0 - a1, a2 + a3, a2 - a3
        v[i], v[i + 1], v[i + 2], v[i + 3] = b0 + b2, b1 + b3, b0 - b2, b1 - b3
    h = 4
    while h < n:
        for i in range(0, n, 2 * h):
            x = v[i : i + h]
            y = v[i + h : i + 2 * h]
            for j in range(h):
                p, q = x[j], y[j]
                x[j] = p + q
                y[j] = p - q
        h *= 2


@njit(cache=True, nogil=True)
def _encode_row(row, signs, buf, out):  # pragma: no cover - compiled
    dim = row.shape[0]
    n_rot, big = signs.shape
    words = big // 64
    for r in range(n_rot):
        for j in range(big):
            buf[j] = row[j] * signs[r, j] if j < dim else np.float32(0.0)
        _fwht(buf)
        for k in range(words):
            word = np.uint64(0)
            seg = buf[k * 64 : (k + 1) * 64]
            for b in range(64):  # branch-free
                word |= np.uint64(seg[b] > 0) << np.uint64(b)
            out[r * words + k] = word


@njit(parallel=True, cache=True, nogil=True)
def _encode(w, signs, out):  # pragma: no cover - compiled
    """Sign bits of each row of w under each rotation: out uint64 [n, R·D/64]."""
    for i in prange(w.shape[0]):
        _encode_row(w[i], signs, np.empty(signs.shape[1], np.float32), out[i])


@njit(cache=True, nogil=True)
def _encode_serial(w, signs, out):  # pragma: no cover - compiled
    buf = np.empty(signs.shape[1], np.float32)
    for i in range(w.shape[0]):
        _encode_row(w[i], signs, buf, out[i])


# Reordering flags only: the NaN/inf check below must survive optimisation.
@njit(parallel=True, cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz", "arcp"})
def _encode_rows(x, u, signs, codes, a, wn, sq):  # pragma: no cover - compiled
    """Everything the index keeps about each row of x (float32), in one parallel pass."""
    n, dim = x.shape
    for i in prange(n):
        row = x[i]
        s = 0.0
        for j in range(dim):
            s += np.float64(row[j]) * np.float64(row[j])
        sq[i] = s
        if not np.isfinite(s) or s == 0.0:
            a[i] = 0.0
            wn[i] = 0.0
            codes[i, :] = 0
            continue
        inv = np.float32(1.0 / np.sqrt(s))
        d = np.float32(0.0)
        for j in range(dim):
            d += row[j] * u[j]
        ai = d * inv
        w = np.empty(dim, np.float32)
        ww = np.float32(0.0)
        for j in range(dim):
            w[j] = row[j] * inv - ai * u[j]
            ww += w[j] * w[j]
        a[i] = ai
        wn[i] = np.sqrt(ww)
        _encode_row(w, signs, np.empty(signs.shape[1], np.float32), codes[i])


@njit(cache=True, nogil=True, inline="always")
def _hamming(codes, i, q):  # pragma: no cover - compiled
    h = 0
    for k in range(codes.shape[1]):
        h += _popcount(codes[i, k] ^ q[k])
    return h


@njit(cache=True, nogil=True, inline="always")
def estimate_h(h, i, table, a, wn, scale, penalty, aq, wq):  # pragma: no cover - compiled
    """Estimated score of row `i` whose code is `h` bits from the query's (angle table)."""
    return (aq * a[i] + wq * wn[i] * table[h]) * scale[i] + penalty[i]


@njit(cache=True, nogil=True, inline="always")
def _estimate(codes, i, q, table, a, wn, scale, penalty, aq, wq):  # pragma: no cover
    """Estimated score of row `i` from its code (Hamming distance → angle table)."""
    return estimate_h(_hamming(codes, i, q), i, table, a, wn, scale, penalty, aq, wq)


@njit(parallel=True, cache=True, nogil=True)
def _hamming_many(codes, qcodes, out, tile):  # pragma: no cover - compiled
    """out[q, i] = Hamming distance of row i's code from query q's, for a batch of queries:
    one pass over the codes, a tile of rows at a time, each tile read once from memory."""
    n = codes.shape[0]
    for t in prange((n + tile - 1) // tile):
        lo, hi = t * tile, min(n, (t + 1) * tile)
        for q in range(qcodes.shape[0]):
            qc = qcodes[q]
            row = out[q]
            for i in range(lo, hi):
                row[i] = _hamming(codes, i, qc)


@njit(cache=True, nogil=True)
def _scan_all(codes, q, table, a, wn, scale, penalty, aq, wq, out):  # pragma: no cover
    """Estimated score of every row."""
    for i in range(codes.shape[0]):
        out[i] = _estimate(codes, i, q, table, a, wn, scale, penalty, aq, wq)


@njit(parallel=True, cache=True, nogil=True)
def _scan_all_par(codes, q, table, a, wn, scale, penalty, aq, wq, out, parts):  # pragma: no cover
    n = codes.shape[0]
    for p in prange(parts):
        for i in range(p * n // parts, (p + 1) * n // parts):
            out[i] = _estimate(codes, i, q, table, a, wn, scale, penalty, aq, wq)


@njit(cache=True, nogil=True)
def _scan_ids(codes, ids, q, table, a, wn, scale, penalty, aq, wq, out):  # pragma: no cover
    for t in range(ids.shape[0]):
        out[t] = _estimate(codes, ids[t], q, table, a, wn, scale, penalty, aq, wq)


@njit(cache=True, nogil=True, inline="always")
def estimate_q(codes, i, planes, lin, a, wn, scale, penalty, aq, wq):  # pragma: no cover
    """Asymmetric estimated score of row `i` (see `_scan_ids_q`)."""
    ones = 0
    d0 = d1 = d2 = d3 = 0
    for k in range(codes.shape[1]):
        c = codes[i, k]
        ones += _popcount(c)
        d0 += _popcount(c & planes[0, k])
        d1 += _popcount(c & planes[1, k])
        d2 += _popcount(c & planes[2, k])
        d3 += _popcount(c & planes[3, k])
    cw = lin[0] + lin[1] * ones + lin[2] * (d0 + 2 * d1 + 4 * d2 + 8 * d3)
    return (aq * a[i] + wq * wn[i] * cw) * scale[i] + penalty[i]


@njit(cache=True, nogil=True)
def _scan_ids_q(codes, ids, planes, lin, a, wn, scale, penalty, aq, wq, out):  # pragma: no cover
    """Asymmetric estimate: the query's rotated coordinates (4-bit, as bit planes) against each
    row's sign bits; cos(w_q, w_x) ≈ lin[0] + lin[1]·ones + lin[2]·Σ_b 2^b·|plane_b ∧ code|."""
    for t in range(ids.shape[0]):
        out[t] = estimate_q(codes, ids[t], planes, lin, a, wn, scale, penalty, aq, wq)


@njit(parallel=True, cache=True, nogil=True)
def _scan_ids_q_par(codes, ids, planes, lin, a, wn, scale, penalty, aq, wq, out, parts):
    n = ids.shape[0]
    for p in prange(parts):  # pragma: no cover - compiled
        lo, hi = p * n // parts, (p + 1) * n // parts
        _scan_ids_q(codes, ids[lo:hi], planes, lin, a, wn, scale, penalty, aq, wq, out[lo:hi])


@njit(cache=True, nogil=True)
def _rotate(w, signs, out):  # pragma: no cover - compiled
    """The query's rotated coordinates, every block [R, D] (the values its code is the sign of)."""
    dim = w.shape[0]
    for r in range(signs.shape[0]):
        buf = out[r]
        for j in range(signs.shape[1]):
            buf[j] = w[j] * signs[r, j] if j < dim else np.float32(0.0)
        _fwht(buf)


@njit(parallel=True, cache=True, nogil=True)
def _scan_ids_par(codes, ids, q, table, a, wn, scale, penalty, aq, wq, out, parts):
    n = ids.shape[0]
    for p in prange(parts):
        lo, hi = p * n // parts, (p + 1) * n // parts
        _scan_ids(codes, ids[lo:hi], q, table, a, wn, scale, penalty, aq, wq, out[lo:hi])


def rotation_signs(dim: int, bits: int, seed: int) -> np.ndarray:
    """Random ±1 of each rotation: float32 [R, D], D = 2^k ≥ max(dim, 64), R·D ≥ bits."""
    big = max(64, 1 << max(0, int(dim - 1).bit_length()))
    n_rot = max(1, -(-bits // big))
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1.0, 1.0], np.float32), size=(n_rot, big))


def split(x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit rows' (a, |w|, w) for float rows x [n, dim] (zero rows give zeros)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    xh = x * inv[:, None]
    a = np.einsum("ij,j->i", xh, u)  # not BLAS: waking its threads costs more for one row
    w = xh - a[:, None] * u
    wn = np.sqrt(np.maximum(np.einsum("ij,ij->i", w, w), 0))
    return a.astype(np.float32), wn.astype(np.float32), np.ascontiguousarray(w, np.float32)


def encode_rows(x: np.ndarray, u: np.ndarray, signs: np.ndarray, codes, a, wn, sq) -> None:
    """Fill codes, a, |w| and float64 squared norms (NaN/inf rows: non-finite sq, zero code)."""
    if len(x):
        _encode_rows(np.ascontiguousarray(x, np.float32), u, signs, codes, a, wn, sq)


def encode(w: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """uint64 [n, R·D/64] sign codes of the rows of w (float32 [n, dim])."""
    out = np.empty((w.shape[0], signs.shape[0] * signs.shape[1] // 64), dtype=np.uint64)
    if len(w) > 64:  # a parallel launch costs more than one query's code
        _encode(np.ascontiguousarray(w, np.float32), signs, out)
    elif len(w):
        _encode_serial(np.ascontiguousarray(w, np.float32), signs, out)
    return out


def angle_table(bits: int) -> np.ndarray:
    """cos(π·h/bits) for every Hamming distance h = 0..bits (float32)."""
    return np.cos(np.pi * np.arange(bits + 1) / bits).astype(np.float32)


def _parts(n: int) -> int:
    # Many small parts: a thread slowed by another process does not hold up the whole scan.
    return max(1, min(n // 1024, 16 * get_num_threads()))


def scan_all(
    codes, q, table, a, wn, scale, penalty, aq: float, wq: float, parallel: bool = True
) -> np.ndarray:
    """Estimated score of every row (parallel over rows for a large vocabulary)."""
    out = np.empty(codes.shape[0], dtype=np.float32)
    args = (codes, q, table, a, wn, scale, penalty, np.float32(aq), np.float32(wq), out)
    parts = _parts(codes.shape[0]) if parallel else 1
    if parts > 1:
        with KERNEL_LOCK:
            _scan_all_par(*args, parts)
    else:
        _scan_all(*args)
    return out


HAMMING_TILE_BYTES = 128 << 10  # a tile of codes and the batch's distances stay in L2


def hamming_many(codes: np.ndarray, qcodes: np.ndarray) -> np.ndarray:
    """uint16 [queries, rows] (uint32 past 65,535 bits): the Hamming distance of every row's
    code from each query's code (uint64 [queries, words]), as one query's scan counts them."""
    qcodes = np.ascontiguousarray(qcodes, dtype=np.uint64)
    dtype = np.uint16 if 64 * codes.shape[1] <= np.iinfo(np.uint16).max else np.uint32
    out = np.empty((qcodes.shape[0], codes.shape[0]), dtype=dtype)
    if out.size:
        tile = max(64, HAMMING_TILE_BYTES // (8 * codes.shape[1] + 2 * qcodes.shape[0]))
        with KERNEL_LOCK:
            _hamming_many(codes, qcodes, out, tile)
    return out


def scan_ids(
    codes, ids, q, table, a, wn, scale, penalty, aq: float, wq: float, parallel: bool = True
) -> np.ndarray:
    out = np.empty(len(ids), dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    args = (codes, ids, q, table, a, wn, scale, penalty, np.float32(aq), np.float32(wq), out)
    parts = _parts(8 * len(ids)) if parallel else 1  # a full code is 8× a head's work
    if parts > 1:
        with KERNEL_LOCK:
            _scan_ids_par(*args, parts)
    else:
        _scan_ids(*args)
    return out


def top_candidates(est: np.ndarray, count: int, in_order: bool = False) -> np.ndarray:
    """Positions of the `count` largest finite values of est (ascending if `in_order`).

    A partial sort of a whole vocabulary per query costs more than the scan that made it; a
    threshold read off every 16th value, then one comparison pass, finds the same set.
    """
    n = len(est)
    if count >= n // 8 or count < 64:
        ids = top_unordered(est, count)
        return np.sort(ids) if in_order else ids
    sample = est[::16]
    rank = max(0, len(sample) - int(1.25 * count / 16))  # a little low: enough pass the cut
    cut = np.partition(sample, rank)[rank]
    ids = np.flatnonzero(est >= cut)
    if len(ids) < count or not np.isfinite(cut):
        ids = top_unordered(est, count)
        return np.sort(ids) if in_order else ids
    values = est[ids]
    if not in_order:
        return ids[np.argpartition(-values, count - 1)[:count]]
    # the count-th largest value as a cut keeps flatnonzero's order (no sort); ties at the cut
    # are broken by position, as a stable sort would
    kth = np.partition(values, len(values) - count)[len(values) - count]
    above = values > kth
    tied = np.flatnonzero(values == kth)[: count - int(above.sum())]
    above[tied] = True
    return ids[above]


@dataclass
class QueryCode:
    """A query as the scans see it: its code, its split (a, |w|), and for the asymmetric
    estimate its rotated coordinates as 4-bit bit planes with the affine map back to cos."""

    code: np.ndarray  # uint64 [words]
    aq: float
    wq: float
    planes: np.ndarray  # uint64 [4, words]
    lin: np.ndarray  # float32 [3]


def query_code(q: np.ndarray, u: np.ndarray, signs: np.ndarray) -> QueryCode:
    a, wn, w = split(q[None, :], u)
    n_rot, big = signs.shape
    rot = np.empty((n_rot, big), np.float32)
    _rotate(w[0], signs, rot)
    flat = rot.reshape(-1)
    code = np.packbits(flat > 0, bitorder="little").view(np.uint64)
    # Each block of a unit w has norm sqrt(D); scaled to unit, a row's sign vector s (±1) gives
    # E<q, s> = n·sqrt(2/(πD))·cos(w_q, w_x) over n coordinates (RaBitQ without the per-row
    # factor, which changed recall by < 0.001 on real and synthetic rows).
    qn = flat / np.float32(max(float(wn[0]), 1e-30) * np.sqrt(big))
    lo, hi = float(qn.min()), float(qn.max())
    step = (hi - lo) / 15 if hi > lo else 1.0
    qu = np.rint((qn - lo) / step).astype(np.uint8)
    bits = (qu[None, :] >> np.arange(4, dtype=np.uint8)[:, None]) & 1
    planes = np.packbits(bits, axis=1, bitorder="little").view(np.uint64)
    n = flat.size
    norm = n * np.sqrt(2 / (np.pi * big))
    # <q, s> = Σ (lo + step·qu)(2b − 1) = 2·lo·ones + 2·step·Σ qu·b − (n·lo + step·Σ qu)
    lin = np.array(
        [-(n * lo + step * float(qu.sum(dtype=np.int64))) / norm, 2 * lo / norm, 2 * step / norm],
        np.float32,
    )
    return QueryCode(code, float(a[0]), float(wn[0]), np.ascontiguousarray(planes), lin)


def scan_ids_q(
    codes, ids, qc: QueryCode, a, wn, scale, penalty, parallel: bool = True
) -> np.ndarray:
    """Asymmetric estimated score of the rows `ids` (stage two: a few thousand rows)."""
    out = np.empty(len(ids), dtype=np.float32)
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    args = (codes, ids, qc.planes, qc.lin, a, wn, scale, penalty)
    tail = (np.float32(qc.aq), np.float32(qc.wq), out)
    parts = _parts(8 * len(ids)) if parallel else 1  # ≥ 128 rows a part, as many as the head
    if parts > 1:
        with KERNEL_LOCK:
            _scan_ids_q_par(*args, *tail, parts)
    else:
        _scan_ids_q(*args, *tail)
    return out
