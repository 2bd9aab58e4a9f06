"""The import contracts in pyproject.toml ([tool.importlinter]) hold: core < app < ui, the CLI
never reaches into ui, and core never imports Qt."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    beside = Path(sys.executable).with_name("lint-imports")  # a venv that is not on PATH
    exe = str(beside) if beside.is_file() else shutil.which("lint-imports")
    assert exe is not None, "import-linter is a test dependency: pip install '.[test]'"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [exe, "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and done.stdout.count("KEPT") == 3
