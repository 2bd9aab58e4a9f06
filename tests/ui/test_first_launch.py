"""The first frame comes first: a splash before the window's own imports, and the window before
numba, scikit-learn and umap-learn, which load afterwards on a worker, never on the GUI thread
(they take seconds on a fresh install), as does the model the window opens."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import builtins, json, os, sys, threading, time

HEAVY = ("numba", "sklearn", "umap", "scipy", "tokenizers")
seen = {"numba_importers": []}  # for every `import numba` statement: on the GUI thread?
plain_import = builtins.__import__

def spy(name, *args, **kwargs):  # sees cached imports too, which wait on a worker's import
    if name == "numba" or name.startswith("numba."):
        seen["numba_importers"].append(threading.current_thread() is threading.main_thread())
    return plain_import(name, *args, **kwargs)

builtins.__import__ = spy

from explorer.ui.window import splash
show_splash = splash.show_splash

def spied_splash(app):
    seen["window_imported_before_splash"] = "explorer.ui.window.main_window" in sys.modules
    shown = show_splash(app)
    from explorer.ui.window import main_window

    global plain_show
    plain_show = main_window.MainWindow.show
    main_window.MainWindow.show = show
    return shown

splash.show_splash = spied_splash

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

def finish(window):
    seen["model_opened"] = window.state.model is not None
    seen["splash_closed"] = not any(
        w.isVisible() and w.windowTitle().endswith("(starting)")
        for w in QApplication.topLevelWidgets()
    )
    print(json.dumps(seen))
    sys.stdout.flush()
    os._exit(0)  # the warm-up may still be compiling; this test is only about the order

def show(window):
    seen["heavy_at_show"] = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
    seen["model_at_show"] = window.state.model is not None
    plain_show(window)
    start = time.monotonic()
    def poll():
        done = seen["numba_importers"] and window.state.model is not None
        if done or time.monotonic() > start + 240:
            finish(window)
        QTimer.singleShot(20, poll)
    QTimer.singleShot(0, poll)

from explorer.cli import main
main(["gui"])
"""


def test_the_window_shows_before_the_heavy_imports_and_the_model(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["window_imported_before_splash"] is False
    assert seen["heavy_at_show"] == [] and seen["model_at_show"] is False, seen
    assert seen["model_opened"] and seen["splash_closed"], seen
    assert seen["numba_importers"], "the warm-up never imported numba"  # the spy sees imports
    assert not any(seen["numba_importers"]), "the GUI thread imported numba"
