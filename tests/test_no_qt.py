"""The core and the headless CLI never import Qt (PySide6, shiboken6, pyqtgraph)."""

from __future__ import annotations

import json
import subprocess
import sys

QT_PREFIXES = ("PySide6", "shiboken6", "pyqtgraph")

SCRIPT = r"""
PRELUDE
import contextlib, importlib, io, json, pkgutil, sys
import explorer.core
import explorer.cli
mods = [m.name for m in pkgutil.walk_packages(explorer.core.__path__, "explorer.core.")]
mods += [m.name for m in pkgutil.iter_modules(explorer.cli.__path__, "explorer.cli.")]
for name in mods:
    importlib.import_module(name)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    for argv in (["info", "--json"], ["tokenize", "the cat", "--json"],
                 ["vector", "--token", "cat"]):
        assert explorer.cli.main(argv) == 0, argv
json.loads(out.getvalue().splitlines()[0])
qt = sorted(m for m in sys.modules if m.split(".")[0] in QT_PREFIXES)
print(json.dumps({"modules": mods, "qt": qt}))
"""


def _check(prelude: str = "") -> dict:
    code = SCRIPT.replace("PRELUDE", f"QT_PREFIXES = {QT_PREFIXES!r}\n{prelude}")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_core_and_cli_do_not_import_qt():
    result = _check()
    assert "explorer.core.model" in result["modules"] and "explorer.cli.info" in result["modules"]
    assert result["qt"] == []


def test_the_check_would_see_qt():
    """Guard: the same check reports Qt when something does import it."""
    assert "pyqtgraph" in _check("import pyqtgraph")["qt"]
