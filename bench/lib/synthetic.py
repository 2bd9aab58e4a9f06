"""A synthetic matrix with the structure of a real one, at any shape.

`measure` reads the structure off a real matrix (SmolLM2's, in the benchmarks): a common mean
direction, a power-law spectrum of the centred rows, log-normal row norms; `write_synthetic`
writes a BF16 safetensors file with that structure, adding topic clusters and near-duplicate
families (`cat`/` cat`/`Cat`) scattered over the row ids.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
from numba import njit, prange

from explorer.core.search.codes import _fwht
from lib.data import TENSOR, all_rows, smollm2


@dataclass(frozen=True)
class Shape:
    """What `measure` reads off a real matrix (centred = mean direction projected out)."""

    norm_mean: float
    norm_cv: float
    mean_cos: float  # cosine of a unit row with the mean direction: mean and spread
    mean_cos_std: float
    alpha: float  # centred singular values fall as i^-alpha
    cluster_share: float = 0.22  # variance a row shares with its topic cluster
    family_share: tuple[float, float] = (0.25, 0.85)  # ... with its near-duplicate family
    family_fraction: float = 0.75  # rows that have near-duplicates


def measure(x: np.ndarray, seed: int = 0) -> Shape:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1)
    ok = norms > 0
    xh = x[ok] / norms[ok, None]
    u = xh.mean(0)
    u /= np.linalg.norm(u)
    a = xh @ u
    rng = np.random.default_rng(seed)
    sample = xh[rng.choice(len(xh), min(len(xh), 8192), replace=False)]
    sample = sample - (sample @ u)[:, None] * u
    s = np.linalg.svd(sample, compute_uv=False)
    i = np.arange(1, len(s) + 1)
    sel = (i >= 5) & (i <= int(0.7 * x.shape[1]))
    slope = np.polyfit(np.log(i[sel]), np.log(s[sel]), 1)[0]
    n = norms[ok]
    return Shape(
        float(n.mean()), float(n.std() / n.mean()), float(a.mean()), float(a.std()), -slope
    )


@njit(parallel=True, cache=True)
def _fwht_rows(a):  # pragma: no cover - compiled
    for i in prange(a.shape[0]):
        _fwht(a[i])


class _Colour:
    """Random vectors whose covariance has singular values i^-alpha, in a random basis.

    The basis is a dense random orthogonal matrix, or for large powers of two (a dense
    4096 × 4096 product per row would take minutes) two rounds of random signs, a Walsh–Hadamard
    transform and a random permutation, which mixes every coordinate into every other.
    """

    def __init__(self, dim: int, alpha: float, rng: np.random.Generator):
        self.scale = (np.arange(1, dim + 1, dtype=np.float64) ** -alpha).astype(np.float32)
        self.scale /= np.sqrt((self.scale**2).sum())
        self.rng = rng
        self.fast = dim >= 2048 and dim & (dim - 1) == 0
        if self.fast:
            self.signs = rng.choice(np.array([-1.0, 1.0], np.float32), size=(3, dim))
            self.perm = rng.permutation(dim)
        else:
            q, _ = np.linalg.qr(rng.standard_normal((dim, dim)).astype(np.float32))
            self.basis = np.ascontiguousarray(q.T)

    def draw(self, n: int) -> np.ndarray:
        g = self.rng.standard_normal((n, len(self.scale)), dtype=np.float32) * self.scale
        if not self.fast:
            return g @ self.basis
        g *= self.signs[0]
        _fwht_rows(g)
        g = np.ascontiguousarray(g[:, self.perm]) * self.signs[1]
        _fwht_rows(g)
        g *= self.signs[2] / np.float32(len(self.scale))
        return g


def write_synthetic(
    path: Path,
    rows: int,
    dim: int,
    shape: Shape,
    seed: int = 0,
    zero_rows: int = 0,
    chunk: int = 8192,
) -> None:
    """Write a BF16 safetensors matrix with `shape`'s structure, chunk by chunk.

    Families are generated together and scattered to random row ids; rows never sit in RAM
    as a whole (one chunk at a time, written through a memory map).
    """
    rng = np.random.default_rng(seed)
    colour = _Colour(dim, shape.alpha, rng)
    u = rng.standard_normal(dim).astype(np.float32)
    u /= np.linalg.norm(u)
    n_clusters = max(2, rows // 120)
    centres = colour.draw(n_clusters)
    cluster_p = rng.lognormal(0, 1.0, n_clusters)
    cluster_p /= cluster_p.sum()
    header = {TENSOR: {"dtype": "BF16", "shape": [rows, dim], "data_offsets": [0, rows * dim * 2]}}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        f.truncate(8 + len(raw) + rows * dim * 2)
    out = np.memmap(path, dtype=np.uint16, mode="r+", offset=8 + len(raw), shape=(rows, dim))
    live = rows - zero_rows
    place = rng.permutation(live)
    done = 0
    while done < live:
        n = min(chunk, live - done)
        # family sizes: 1 (no near-duplicate) or 2..6
        sizes = np.where(rng.random(n) < shape.family_fraction / 2.5, rng.integers(2, 7, n), 1)
        fam = np.repeat(np.arange(n), sizes)[:n]
        share = rng.uniform(*shape.family_share, n)[fam] * (sizes[fam] > 1)
        clusters = rng.choice(n_clusters, size=n, p=cluster_p)[fam]
        base = colour.draw(n)[fam]
        c = np.float32(shape.cluster_share)
        w = np.sqrt(c) * centres[clusters] + np.sqrt((1 - c) * share)[:, None] * base
        w += np.sqrt((1 - c) * (1 - share))[:, None] * colour.draw(n)
        w -= (w @ u)[:, None] * u
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        a = np.clip(rng.normal(shape.mean_cos, shape.mean_cos_std, n), -0.95, 0.95)
        x = a[:, None].astype(np.float32) * u + np.sqrt(1 - a**2)[:, None].astype(np.float32) * w
        norms = shape.norm_mean * rng.lognormal(0, shape.norm_cv, n)
        x *= norms[:, None].astype(np.float32)
        ids = place[done : done + n]
        order = np.argsort(ids)
        out[ids[order]] = x[order].astype(ml_dtypes.bfloat16).view(np.uint16)
        done += n
    out.flush()
    del out


def write_realistic(path: Path, rows: int, dim: int) -> Shape:
    """A `rows` × `dim` matrix with SmolLM2's measured structure, one row in a thousand zero (as
    real vocabularies hold unused rows); its shape."""
    shape = measure(all_rows(smollm2()))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_synthetic(path, rows, dim, shape, zero_rows=rows // 1000)
    return shape
