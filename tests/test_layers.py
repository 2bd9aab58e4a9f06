"""The import contracts in pyproject.toml ([tool.importlinter]) hold: core < app, render < ui; the
CLI never reaches into ui; core and the API never import Qt (nor core the API), app only QtCore,
render no widgets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(config: Path, cwd: Path, *paths: Path) -> subprocess.CompletedProcess:
    beside = Path(sys.executable).with_name("lint-imports")  # a venv that is not on PATH
    exe = str(beside) if beside.is_file() else shutil.which("lint-imports")
    assert exe is not None, "import-linter is a test dependency: pip install '.[test]'"
    python_path = os.pathsep.join([*map(str, paths), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [exe, str(config)],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=python_path),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_import_contracts_are_kept():
    done = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and done.stdout.count("KEPT") == 6


PROBE_CONFIG = """
[tool.importlinter]
root_package = "probe"
include_external_packages = true
contract_types = ["outside_modules: tests.import_contracts.OutsideModulesContract"]

[[tool.importlinter.contracts]]
name = "probe.app uses QtCore only"
type = "outside_modules"
source_modules = ["probe.app"]
forbidden_modules = ["PySide6.QtGui", "PySide6.QtWidgets"]
"""


def test_the_qt_module_contract_sees_a_widget_import_two_modules_away(tmp_path):
    package = tmp_path / "probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "app.py").write_text("from PySide6.QtCore import QObject\nfrom probe import low\n")
    (package / "low.py").write_text("from PySide6 import (\n    QtCore,\n)\n")
    (package / "paint.py").write_text("from PySide6.QtWidgets import QWidget\n")
    (tmp_path / "pyproject.toml").write_text(PROBE_CONFIG)
    done = lint_imports(tmp_path / "pyproject.toml", tmp_path, tmp_path)
    assert "BROKEN" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert "probe.low:1: from PySide6 import (" in done.stdout  # reached through probe.app
    assert "probe.app:" not in done.stdout and "probe.paint" not in done.stdout

    (package / "low.py").write_text("from PySide6.QtCore import QTimer\n")
    done = lint_imports(tmp_path / "pyproject.toml", tmp_path, tmp_path)
    assert done.returncode == 0 and "KEPT" in done.stdout, done.stdout[-3000:] + done.stderr
