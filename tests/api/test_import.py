"""`import explorer` stays light: no Qt, numba, scikit-learn or model readers until used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("PySide6", "numba", "sklearn")


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout, not an installed copy
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )


def test_import_explorer_loads_no_qt_numba_or_sklearn():
    heavy = repr(HEAVY)
    proc = _run(f"import explorer, sys; assert not any(m.startswith({heavy}) for m in sys.modules)")
    assert proc.returncode == 0, proc.stderr


def test_api_names_load_without_model_readers():
    """Resolving the API's names loads numpy and the result types only: ml_dtypes, safetensors
    and tokenizers wait for `explorer.open`."""
    proc = _run(
        "import sys, explorer\n"
        "from explorer import Model, Neighbors, open, Tokens\n"
        "late = ('ml_dtypes', 'safetensors', 'tokenizers', 'gguf', 'PySide6', 'numba', 'sklearn')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(late)}))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_check_sees_a_heavy_import():
    """Guard: the same check fails once something does import one of them."""
    proc = _run(
        f"import explorer, sys, numba; assert not any(m.startswith({HEAVY!r}) for m in sys.modules)"
    )
    assert proc.returncode != 0
