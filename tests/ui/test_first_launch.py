"""A frozen app's first launch unpacks LLVM when numba is first imported (seconds, see
packaging/rthook_llvmlite_unpack.py): the window's start-up leaves every numba import to its
workers, so that the first window never waits for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import builtins, json, os, sys, threading, time

importers = []  # for every `import numba` statement: made on the GUI thread?
plain_import = builtins.__import__

def spy(name, *args, **kwargs):  # sees cached imports too, which wait on a worker's import
    if name == "numba" or name.startswith("numba."):
        importers.append(threading.current_thread() is threading.main_thread())
    return plain_import(name, *args, **kwargs)

builtins.__import__ = spy
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from explorer.app import tuning
from explorer.app.state import AppState
from explorer.core.resources import demo_model_dir
from explorer.ui.main_window import MainWindow

tuning.tune_process()
app = QApplication([])
window = MainWindow(AppState(), QSettings(), persist=False, warm_up=True)
window.open_path(str(demo_model_dir()))
window.token_pane.set_text("The cat sat on the mat")
window.show()
start = time.monotonic()
while time.monotonic() < start + 120 and (not importers or time.monotonic() < start + 3):
    app.processEvents()
    time.sleep(0.01)
print(json.dumps(importers))
sys.stdout.flush()
os._exit(0)  # the warm-up may still be compiling; this test is only about who imports
"""


def test_start_up_imports_numba_only_off_the_gui_thread(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=180, env=env
    )
    assert proc.returncode == 0, proc.stderr
    importers = json.loads(proc.stdout.strip().splitlines()[-1])
    assert importers, "the map's warm-up never imported numba"  # the spy sees imports
    assert not any(importers), "the GUI thread imported numba while the window started"
