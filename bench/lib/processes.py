"""Whole processes timed in interleaved rounds, so that other load on the machine hits every
command alike; wall and CPU time of each."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

Times = dict[str, list[tuple[float, float]]]


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _cpu_of_children() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def timed_run(cmd: list[str], cwd: Path, tree: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process: with the installed explorer package, or with
    the one of the checkout `tree`."""
    # .pyc files as an installed package has them (pip compiles on install); a shell with
    # PYTHONDONTWRITEBYTECODE set would otherwise recompile every module on every run.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    cpu = _cpu_of_children()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return elapsed, _cpu_of_children() - cpu


def interleaved(
    commands: dict[str, list[str]],
    rounds: int,
    cwd: Path,
    trees: dict[str, Path | None] | None = None,
) -> Times:
    """(wall, CPU) per round of each named command; `trees` gives a command another checkout's
    package (an A/B of the same command)."""
    trees = trees or {}
    times: Times = {name: [] for name in commands}
    for name, cmd in commands.items():  # untimed: page cache, numba cache, .pyc files
        timed_run(cmd, cwd, trees.get(name))
    for r in range(rounds):
        order = list(commands.items())
        if r % 2:  # alternate the order so that neither side always runs first
            order.reverse()
        for name, cmd in order:
            times[name].append(timed_run(cmd, cwd, trees.get(name)))
    return times
