"""Candidate first stages side by side on real rows: which keeps the true top-10?

For 200 random rows of a real matrix, the share of each row's exact top-10 (cosine and dot)
that lands in the best C rows by each estimator, i.e. the best recall an exact re-rank of C
candidates can reach. Estimators, at equal bytes per row where possible:
  pca-r     the previous index: r principal coordinates of the centred unit rows (int8)
  sign-b    sign codes of b randomly rotated coordinates of the centred unit rows (b/8 bytes),
            Hamming distance → angle (what explorer.core.search.codes does)
int8 scalar quantisation of every coordinate is left out on size: 4096 bytes a row is 1 GB at
248320 × 4096, over the 300 MB budget.
"""

from __future__ import annotations

import numpy as np

from explorer.core.search import codes as search_codes
from lib.data import all_rows, smollm2

COUNTS = (200, 1000, 4000)


def _recall(est, truth, qids, counts=COUNTS) -> list[float]:
    est = est.copy()
    est[np.arange(len(qids)), qids] = -np.inf
    out = []
    for c in counts:
        top = np.argpartition(-est, c, axis=1)[:, :c]
        out.append(np.mean([len(set(truth[i]) & set(top[i])) / 10 for i in range(len(qids))]))
    return out


def compare_matrix(name: str, x: np.ndarray) -> None:
    x = np.asarray(x, np.float32)
    n, d = x.shape
    norms = np.linalg.norm(x, axis=1)
    xh = x / norms[:, None]
    rng = np.random.default_rng(0)
    u = xh[rng.choice(n, min(n, 8192), replace=False)].mean(0)
    u /= np.linalg.norm(u)
    a, wn, w = search_codes.split(x, u)
    qids = rng.choice(n, 200, replace=False)
    truth = {}
    for metric, s in (("cosine", xh[qids] @ xh.T), ("dot", x[qids] @ x.T)):
        s[np.arange(200), qids] = -np.inf
        truth[metric] = np.argpartition(-s, 10, axis=1)[:, :10]
    print(f"\n{name} {n} × {d}: share of the true top-10 within the best C by each estimator")
    print(
        f"{'estimator':<12} {'bytes':>5}  "
        + "  ".join(f"{m[:3]} C={c:<5}" for m in ("cosine", "dot") for c in COUNTS)
    )
    sample = w[rng.choice(n, min(n, 8192), replace=False)]
    _, sv, vt = np.linalg.svd(sample - sample.mean(0), full_matrices=False)
    share = np.cumsum(sv**2) / np.sum(sv**2)
    for r in (64, 128, 256):
        if r >= d:
            continue
        c = w @ vt[:r].T
        scale = np.abs(c).max(0) / 127
        c = np.rint(c / scale) * scale
        cos = a[qids, None] * a[None] + (w[qids] @ vt[:r].T) @ c.T
        res = _recall(cos, truth["cosine"], qids) + _recall(cos * norms, truth["dot"], qids)
        print(
            f"{f'pca-{r}':<12} {r:>5}  "
            + "  ".join(f"{v:11.3f}" for v in res)
            + f"   ({share[r - 1]:.0%} of the variance)"
        )
    for bits in (512, 1024):
        signs = search_codes.rotation_signs(d, bits, seed=1)
        codes = search_codes.encode(w, signs)
        bits_used = codes.shape[1] * 64
        sg = np.unpackbits(codes.view(np.uint8), axis=1, bitorder="little").astype(np.float32)
        agree = (2 * sg[qids] - 1) @ (2 * sg - 1).T
        ang = np.cos(np.pi * (bits_used - agree) / 2 / bits_used)
        cos = a[qids, None] * a[None] + wn[qids, None] * wn[None] * ang
        res = _recall(cos, truth["cosine"], qids) + _recall(cos * norms, truth["dot"], qids)
        print(
            f"{f'sign-{bits_used}':<12} {bits_used // 8:>5}  "
            + "  ".join(f"{v:11.3f}" for v in res)
        )


def compare() -> None:
    from explorer.core.resources import demo_model_dir

    for name, path in (("demo", demo_model_dir()), ("smollm2", smollm2())):
        compare_matrix(name, all_rows(path))
