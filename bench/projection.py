"""PCA and UMAP layout times on 4096-d data, beside plain umap-learn, and trustworthiness.

    python bench/projection.py [--sizes 500,2000,10000] [--skip-plain-above N]

* cold: a fresh process with an empty numba cache (import + compilation), then a fresh process
  with a filled cache (what a user sees from the second launch on); for a whole-process
  comparison with plain umap-learn see bench/cli_startup.py;
* warm: repeated fits inside one process after a first fit;
* baseline: `umap.UMAP(metric="cosine").fit_transform(x)` (its defaults; threads allowed);
* quality: trustworthiness (scikit-learn, cosine, 10 neighbours) on the demo model's 500
  nearest tokens of `cat`, for PCA, our UMAP (with and without the neighbour refinement),
  plain umap-learn and t-SNE.

Data: clusters plus noise in 4096 dimensions (like real embeddings, neighbourhoods have
structure), generated with a fixed seed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

DIM = 4096


def structured(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(4, n // 100), dim)).astype(np.float32)
    which = rng.integers(0, len(centres), n)
    common = rng.standard_normal(dim).astype(np.float32) * 2  # shared direction, as in LLMs
    return centres[which] + 0.8 * rng.standard_normal((n, dim)).astype(np.float32) + common


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def child(mode: str, sizes: list[int], skip_plain_above: int) -> dict:
    """Runs in a subprocess so that 'cold' really is cold."""
    from explorer.core.map import projection as P

    warnings.simplefilter("ignore")
    out: dict = {"mode": mode}
    out["import_umap_s"], _ = timed(lambda: __import__("umap"))  # the plain baseline's import
    params = P.ProjectionParams(seed=42)
    first = structured(sizes[0])
    out["first_fit_s"], _ = timed(lambda: P.project(first, params))
    if mode == "cold":
        return out
    import umap

    P.pca_2d(P.prepare(structured(50)))  # imports scikit-learn's SVD
    for n in sizes:
        x = structured(n)
        row: dict = {"n": n}
        row["pca_s"], _ = timed(lambda x=x: P.pca_2d(P.prepare(x)))
        row["ours_s"], _ = timed(lambda x=x: P.project(x, params))
        if n <= skip_plain_above:
            # its own first fit compiles other code paths: time the second one
            umap.UMAP(metric="cosine").fit_transform(x[: min(n, 600)])
            row["plain_s"], _ = timed(lambda x=x: umap.UMAP(metric="cosine").fit_transform(x))
        out[f"n{n}"] = row
    return out


def quality() -> dict:
    from explorer.core.map import neighborhood as N
    from explorer.core.map import projection as P
    from explorer.core.model.open import open_model
    from explorer.core.resources import demo_model_dir

    warnings.simplefilter("ignore")
    import umap

    model = open_model(demo_model_dir())
    nb = N.around(model, model.tokenizer.find("cat"), 500)
    x = model.vectors(nb.ids)
    pca = P.pca_2d(P.prepare(x))
    ours = P.project(x, P.ProjectionParams(seed=42))
    unrefined = P.project(x, P.ProjectionParams(seed=42, refine=False))
    plain = umap.UMAP(metric="cosine").fit_transform(x)
    from sklearn.manifold import TSNE

    tsne = TSNE(metric="cosine", init="pca", random_state=0).fit_transform(P.prepare(x))
    layouts = {
        "pca": pca,
        "umap_ours": ours,
        "ours_unrefined": unrefined,
        "umap_plain": plain,
        "tsne": tsne,
    }
    return {name: round(P.trustworthiness(x, c), 4) for name, c in layouts.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="500,2000,10000")
    ap.add_argument("--skip-plain-above", type=int, default=10_000)
    ap.add_argument("--child", choices=["cold", "warm", "quality"])
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child == "quality":
        print(json.dumps(quality()))
        return
    if args.child:
        print(json.dumps(child(args.child, sizes, args.skip_plain_above)))
        return

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        results = []
        for mode in ("cold", "warm"):
            cmd = [
                sys.executable,
                __file__,
                "--child",
                mode,
                "--sizes",
                args.sizes,
                "--skip-plain-above",
                str(args.skip_plain_above),
            ]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"{mode} run failed:\n{proc.stderr}")
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    cold, warm = results
    print(f"machine: {os.cpu_count()} cores; data: clusters + noise, {DIM} dims, float32")
    print(
        f"import umap: {cold['import_umap_s']:.1f} s with an empty numba cache, "
        f"{warm['import_umap_s']:.1f} s with a filled one"
    )
    print(
        f"first UMAP fit in a process ({sizes[0]} points): {cold['first_fit_s']:.1f} s with an "
        f"empty cache, {warm['first_fit_s']:.1f} s with a filled one"
    )
    print()
    print(
        f"{'points':>7} {'PCA preview':>12} {'our UMAP':>9} {'plain umap-learn':>17} {'ratio':>6}"
    )
    for n in sizes:
        row = warm[f"n{n}"]
        plain = row.get("plain_s")
        ratio = f"{row['ours_s'] / plain:.2f}" if plain else "-"
        plain_s = f"{plain:.2f} s" if plain else "skipped"
        print(f"{n:>7} {row['pca_s']:>10.2f} s {row['ours_s']:>7.2f} s {plain_s:>17} {ratio:>6}")
    print(
        "(warm: numba cache filled and a first fit done in the process; seed 42 for ours, "
        "plain umap-learn unseeded and multithreaded)"
    )
    proc = subprocess.run(
        [sys.executable, __file__, "--child", "quality"], capture_output=True, text=True, check=True
    )
    q = json.loads(proc.stdout.strip().splitlines()[-1])
    print()
    print("trustworthiness (cosine, 10 neighbours), demo model, 500 tokens around `cat`:")
    for name, value in q.items():
        print(f"  {name:<14} {value:.3f}")


if __name__ == "__main__":
    main()
