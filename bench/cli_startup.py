"""Whole-process CLI times beside the scripts they should be compared with, interleaved.

    python bench/cli_startup.py [--rounds 7] [--project-rounds 3] [--skip-project]
                                [--python /tmp/fresh/bin/python]

* `info`, `tokenize`, `vector` on the built-in demo model against a 10-line script that reads
  the safetensors header and one row from the memory map (numpy import included);
  goal: at most 1.5x that script.
* `project --around cat -n 500 --out cat.png` against a fresh-process plain
  `umap.UMAP(metric="cosine").fit_transform` of the same 500 rows (saved to .npy first);
  goal: at most 0.2x.

`--python` runs both sides with another interpreter: a fresh venv with `pip install .` shows
what a new user gets (today's dependency versions, ml_dtypes' among them; run it from outside
the checkout with PYTHONPATH unset, so that the installed package is the one measured).

Every figure is a whole process (`python -m explorer ...`), started the way a user starts it.
The commands run in interleaved rounds so that other load on the machine hits all of them
alike; the ratios are of medians. One untimed round first fills the page cache, numba's
cache and the user cache (a tokenizer.json's vocabulary table, the tokenizer check's verdict),
as on any run after the first. The load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lib.processes import Times, interleaved, load

BASELINE = """\
import json, struct, sys
import numpy as np
path, row = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
t = next(v for k, v in header.items() if k != "__metadata__")
m = np.memmap(path, np.uint16, "r", offset=8 + n + t["data_offsets"][0], shape=tuple(t["shape"]))
print(json.dumps((m[row].astype(np.uint32) << 16).view(np.float32).tolist()))  # BF16 -> F32
"""

PLAIN_UMAP = """\
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import umap
x = np.load(sys.argv[1])
umap.UMAP(metric="cosine").fit_transform(x)
"""


def report(times: Times, base: str, goal: float) -> None:
    """Wall time is the figure the goal is about; CPU time (user + system of the process) is
    printed beside it because it moves far less when other processes share the cores."""
    ref = statistics.median(w for w, _ in times[base])
    ref_cpu = statistics.median(c for _, c in times[base])
    for name, ts in times.items():
        med = statistics.median(w for w, _ in ts)
        cpu = statistics.median(c for _, c in ts)
        ratio = "" if name == base else f"  ratio {med / ref:.2f} (goal <= {goal:g})"
        cpu_ratio = "" if name == base else f" ({cpu / ref_cpu:.2f}x)"
        print(
            f"  {name:<44} median {med:6.3f} s  min {min(w for w, _ in ts):6.3f} s"
            f"  max {max(w for w, _ in ts):6.3f} s"
            f"  CPU {cpu:6.3f} s{cpu_ratio}{ratio}"
        )


def versions(py: str) -> str:
    """Where `py`'s explorer comes from and the versions that decide its start-up."""
    code = (
        "import importlib.metadata as m, explorer; print(explorer.__file__, *("
        "f'{d} {m.version(d)}' for d in ('numpy', 'ml_dtypes', 'safetensors', 'tokenizers')))"
    )
    return subprocess.run([py, "-c", code], capture_output=True, text=True).stdout.strip()


def cli_figures(rounds: int, tmp: Path, py: str) -> None:
    demo = subprocess.run(
        [py, "-c", "from explorer.core.resources import demo_model_dir; print(demo_model_dir())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    weights = Path(demo) / "model.safetensors"
    (tmp / "baseline.py").write_text(BASELINE)
    ee = [py, "-m", "explorer"]
    print(f"interpreter {py}: {versions(py)}")
    commands = {
        "10-line script (header + one row)": [py, str(tmp / "baseline.py"), str(weights), "3710"],
        "info --json": [*ee, "info", "--json"],
        'tokenize "The cat sat" --json': [*ee, "tokenize", "The cat sat", "--json"],
        "vector --id 3710 --json": [*ee, "vector", "--id", "3710", "--json"],
    }
    print(f"CLI start-up, {rounds} interleaved rounds ({load()} before)")
    times = interleaved(commands, rounds, tmp)
    report(times, "10-line script (header + one row)", 1.5)
    print(f"  ({load()} after)")


def project_figures(rounds: int, tmp: Path) -> None:
    import numpy as np

    from explorer.core.map import neighborhood
    from explorer.core.model.open import open_model
    from explorer.core.resources import demo_model_dir

    model = open_model(demo_model_dir())
    nb = neighborhood.around(model, model.tokenizer.find("cat"), 500)
    np.save(tmp / "cat500.npy", model.vectors(nb.ids))
    (tmp / "plain_umap.py").write_text(PLAIN_UMAP)
    commands = {
        "plain umap.UMAP(metric='cosine'), 500 rows": [
            sys.executable,
            str(tmp / "plain_umap.py"),
            str(tmp / "cat500.npy"),
        ],
        "project --around cat -n 500 --out cat.png": [
            *(sys.executable, "-m", "explorer", "project"),
            *("--around", "cat", "-n", "500", "--out", str(tmp / "cat.png")),
        ],
    }
    print(f"\nMaps, {rounds} interleaved rounds ({load()} before)")
    times = interleaved(commands, rounds, tmp)
    report(times, "plain umap.UMAP(metric='cosine'), 500 rows", 0.2)
    print(f"  ({load()} after)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--project-rounds", type=int, default=3)
    ap.add_argument("--skip-project", action="store_true")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the CLI figures")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="ee-cli-bench-") as tmp:
        if not args.skip_cli:
            cli_figures(args.rounds, Path(tmp), args.python)
        if not args.skip_project:
            project_figures(args.project_rounds, Path(tmp))


if __name__ == "__main__":
    main()
