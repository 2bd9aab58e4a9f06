"""`embedding-explorer neighbors --fast` against numpy float64 brute force, on real models.

For the demo model and SmolLM2-135M (its GGUF's Q8_0 table dequantised and stored as a BF16
folder, see lib/data.py), asks the command line for the fast-index top-10 of random rows
(one process per query, as a user would; the first call builds the index into a temporary cache)
and counts how many of them are among the true top-10 computed here in float64 (rows tied with the
10th count as right: real vocabularies hold duplicate rows).

    python bench/neighbors_cli_recall.py [--queries 40] [--only demo,smollm2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from lib.data import smollm2


def true_top(values: np.ndarray, qid: int, metric: str, k: int = 10) -> set[int]:
    """The true top-k of row `qid` in float64, and every row tied with the k-th."""
    s = values @ values[qid]
    if metric == "cosine":
        s = s / np.linalg.norm(values, axis=1)
    s[qid] = -np.inf
    kth = np.sort(s)[-k]
    return set(np.flatnonzero(s >= kth - 1e-9 * abs(kth)).tolist())


def fast_ids(model: Path, qid: int, metric: str, env: dict) -> tuple[list[int], str]:
    cmd = [sys.executable, "-m", "explorer", "neighbors", "-m", str(model), "--id", str(qid)]
    cmd += ["--fast", "--json", "-k", "10", "--metric", metric]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return [row["id"] for row in json.loads(out.stdout)], out.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--only", default="demo,smollm2")
    args = ap.parse_args()
    from explorer.core.model.open import open_model
    from explorer.core.resources import demo_model_dir

    paths = {"demo": demo_model_dir(), "smollm2": smollm2()}
    with tempfile.TemporaryDirectory(prefix="ee-cli-recall-") as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)  # a fresh index, built by the first call
        for name in args.only.split(","):
            model = open_model(paths[name], tokenizer=False)
            values = model.vectors(np.arange(model.rows)).astype(np.float64)
            usable = np.flatnonzero(np.abs(values).sum(axis=1) > 0)
            qids = np.random.default_rng(5).choice(usable, args.queries, replace=False)
            print(f"{name}: {model.rows} × {model.dim} {model.dtype}")
            for metric in ("cosine", "dot"):
                hits, worst = 0, 10
                for qid in qids.tolist():
                    got, _ = fast_ids(paths[name], qid, metric, env)
                    found = min(10, len(set(got) & true_top(values, qid, metric)))
                    hits, worst = hits + found, min(worst, found)
                recall = hits / (10 * len(qids))
                print(
                    f"  {metric:<6} neighbors --fast: recall@10 {recall:.4f} against float64 "
                    f"brute force on {len(qids)} random rows (worst query {worst}/10)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
