"""What `import explorer` costs in a fresh process, beside `import numpy`, interleaved.

    python bench/api_import.py [--rounds 9]

Each figure is a whole process (`python -c ...`), so interpreter start-up is in all of them:
* `import numpy` (the floor a notebook pays anyway);
* `import explorer` (the goal: at most 1.5x `import numpy`);
* `from explorer import open, Model, Neighbors` (the names resolved: numpy and the result types);
* `python -c pass` (interpreter start-up alone, for scale).
Ratios are of medians; the spread is min..max over the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from lib.processes import interleaved, load

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "import numpy": [py, "-c", "import numpy"],
        "import explorer": [py, "-c", "import explorer"],
        "from explorer import open, Model, Neighbors": [
            py,
            "-c",
            "from explorer import open, Model, Neighbors",
        ],
    }
    trees = {name: ROOT for name in commands}
    print(f"fresh processes, {args.rounds} interleaved rounds ({load()} before)")
    times = interleaved(commands, args.rounds, ROOT, trees)
    floor = statistics.median(w for w, _ in times["import numpy"])
    for name, ts in times.items():
        walls = [w for w, _ in ts]
        med = statistics.median(walls)
        ratio = f"  {med / floor:.2f}x import numpy" if name != "import numpy" else ""
        goal = " (goal <= 1.5x)" if name == "import explorer" else ""
        print(
            f"  {name:<44} median {1000 * med:6.1f} ms  "
            f"spread {1000 * min(walls):6.1f}..{1000 * max(walls):6.1f} ms{ratio}{goal}"
        )
    print(f"  ({load()} after)")


if __name__ == "__main__":
    main()
