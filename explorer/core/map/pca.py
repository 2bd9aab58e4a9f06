"""PCA of prepared (unit-length) rows: the map's instant preview and UMAP's starting layout."""

from __future__ import annotations

import numpy as np


def _flip_signs(components: np.ndarray) -> np.ndarray:
    """Make each component's largest |loading| positive so layouts are deterministic."""
    idx = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(len(components)), idx])
    signs[signs == 0] = 1
    return components * signs[:, None]


_blas_controller = None


def _one_blas_thread():
    global _blas_controller
    try:
        if _blas_controller is None:
            from threadpoolctl import ThreadpoolController

            _blas_controller = ThreadpoolController()
        return _blas_controller.limit(limits=1, user_api="blas")
    except Exception:  # an optional speed-up, never a failure
        import contextlib

        return contextlib.nullcontext()


def _orthonormal(y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the columns of a tall, thin y through its small Gram matrix
    (np.linalg.qr of a 4096 × 10 block took 20–60 ms here; this takes well under 1 ms)."""
    w, v = np.linalg.eigh((y.T @ y).astype(np.float64))
    keep = w > max(float(w.max()), 0.0) * 1e-10
    if not keep.any():
        return np.zeros((y.shape[0], 1), dtype=np.float32)
    return (y @ (v[:, keep] / np.sqrt(w[keep])).astype(np.float32)).astype(np.float32)


def principal_components(x: np.ndarray, k: int, seed: int = 0, iters: int = 3) -> np.ndarray:
    """Top-k principal axes [k, d] of the rows of x (centred implicitly, never copied).

    Small inputs: exact SVD. Otherwise a randomized range finder with power iterations in
    float32: a handful of [n, d] × [d, k + 8] products, several times cheaper than
    scikit-learn's `randomized_svd` here (which copies, converts and calls LAPACK QR/SVD)."""
    n, d = x.shape
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32)
    k_eff = min(k, n, d)
    if min(n, d) <= 4 * k + 10:
        centred = x.astype(np.float64) - mean
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        comps = vt[:k_eff]
    else:

        def times(v: np.ndarray) -> np.ndarray:  # (x - mean) @ v
            return x @ v - (mean @ v)[None, :]

        def t_times(u: np.ndarray) -> np.ndarray:  # (x - mean).T @ u
            return x.T @ u - np.outer(mean, u.sum(axis=0))

        omega = np.random.default_rng(seed).standard_normal((d, min(k + 8, n, d)))
        # thin products are memory-bound: one BLAS thread is as fast, and far faster when
        # the cores are busy (the GUI, other lanes, other programs)
        with _one_blas_thread():
            q = _orthonormal(times(omega.astype(np.float32)))
            for _ in range(iters):
                q = _orthonormal(times(_orthonormal(t_times(q))))
            b = t_times(q).T
        _, _, vt = np.linalg.svd(b.astype(np.float64), full_matrices=False)
        comps = vt[:k_eff]
    comps = _flip_signs(np.asarray(comps, dtype=np.float32))
    if k_eff < k:
        comps = np.vstack([comps, np.zeros((k - k_eff, d), dtype=np.float32)])
    return comps


def pca_2d(x: np.ndarray, seed: int = 0) -> np.ndarray:
    """PCA(2) of prepared rows → [n, 2] float32. Works for any n ≥ 0."""
    if len(x) == 0:
        return np.zeros((0, 2), dtype=np.float32)
    comps = principal_components(x, 2, seed)
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32)
    return (x @ comps.T - mean @ comps.T).astype(np.float32)
