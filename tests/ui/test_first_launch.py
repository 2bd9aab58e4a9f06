"""numba starts on the GUI thread before the window shows (later, on a worker, it froze the
window in ~120 ms stretches), except on a frozen app's first launch, whose first numba import
unpacks LLVM for seconds (packaging/rthook_llvmlite_unpack.py): then the window leaves every
numba import to its workers, so that the first window never waits for it."""

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
from explorer.ui.window.main_window import MainWindow

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


def numba_importers(tmp_path, first_launch: bool) -> list[bool]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env.pop("EMBEDDING_EXPLORER_UNPACK_LLVM", None)
    if first_launch:  # what the runtime hook sets when LLVM is not unpacked yet
        env["EMBEDDING_EXPLORER_UNPACK_LLVM"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_first_launch_leaves_numba_to_the_workers(tmp_path):
    importers = numba_importers(tmp_path, first_launch=True)
    assert importers, "the map's warm-up never imported numba"  # the spy sees imports
    assert not any(importers), "the GUI thread imported numba on a first launch"


def test_later_launches_start_numba_before_the_window_shows(tmp_path):
    importers = numba_importers(tmp_path, first_launch=False)
    assert importers and importers[0], "numba was first imported on a worker"
