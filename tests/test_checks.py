"""The static checks CI relies on: mypy (`--check-untyped-defs`), ruff and vulture, set up in
pyproject.toml. Each is skipped only when its tool is not installed (all are in the test extra)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _needs(module: str):
    missing = importlib.util.find_spec(module) is None
    return pytest.mark.skipif(
        missing, reason=f"{module} is a test dependency: pip install '.[test]'"
    )


@_needs("mypy")
def test_mypy_is_clean():
    done = _run("mypy", "--check-untyped-defs", "explorer")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


@_needs("ruff")
def test_ruff_is_clean():
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout[-4000:] + lint.stderr[-2000:]
    fmt = _run("ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout[-4000:] + fmt.stderr[-2000:]


@_needs("vulture")
def test_no_dead_code():
    """vulture over explorer/, tests/ and bench/ ([tool.vulture]: known false positives named)."""
    done = _run("vulture")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
