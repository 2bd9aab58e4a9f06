"""The window's process never imports the Rust tokenizer: a whole window, in a fresh
interpreter that refuses the import, types, pastes, searches, maps and trains through the
tokenizer's child process and gets the tokenizer's own answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import explorer
from explorer.core.model.open import open_model
from tests.support.models import write_model

TEXT = "The cat sat on the mat. naïve 🐱"

WINDOW_SCRIPT = textwrap.dedent(
    """
    import json, sys, time

    class Refuse:  # every attempt to import the Rust tokenizer here is recorded and fails
        tried = []

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "tokenizers":
                Refuse.tried.append(name)
                raise ImportError("the window's process must not import " + name)

    sys.meta_path.insert(0, Refuse())
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from explorer.app.state import AppState
    from explorer.ui.window.main_window import MainWindow

    def wait(condition):
        deadline = time.monotonic() + 120
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            app.processEvents()
            time.sleep(0.005)

    settings = QSettings(sys.argv[2], QSettings.Format.IniFormat)
    window = MainWindow(AppState(), settings, persist=False)
    window.show()
    window.open_path(sys.argv[1])
    wait(lambda: window.state.model is not None)
    typed, pasted = sys.argv[3].split("|")
    QTest.keyClicks(window.token_pane.editor, typed)  # typing (QTest types ASCII only)…
    window.token_pane.editor.insertPlainText(pasted)  # …and a paste
    wait(lambda: window.state.text == typed + pasted and window.state.tokens and not window.pending)
    window.neighbors.search_text("the cat")  # a phrase query encodes too
    wait(lambda: window.neighbors.latest is not None and not window.pending)
    phrase = [window.neighbors.latest.description, len(window.neighbors.latest.result.ids)]
    found = window.state.select_ref("the")
    window.map_pane.n.setValue(30)  # a map of the neighbourhood, coloured by kind
    window.map_pane.colour.setCurrentIndex(window.map_pane.colour.findData("kind"))
    window.map_pane.request_map()
    wait(lambda: window.map_pane.data is not None and window.map_pane.data.final)
    wait(lambda: not window.pending)
    from explorer.core.learning.trainer import LearnParams

    learned, contrast = [], []  # training encodes the bundled corpus; the twin finds its groups
    window.learn.controller.trainingDone.connect(learned.append)
    window.learn.controller.failed.connect(learned.append)
    window.learn.controller.contrastReady.connect(contrast.append)
    window.learn.controller.contrastFailed.connect(contrast.append)
    window.learn.controller.start(LearnParams(dim=8, epochs=1, map_tokens=20))
    wait(lambda: learned)
    window.learn.controller.measure_twin()
    wait(lambda: contrast)
    out = {
        "learned": repr(learned[0])[:300],
        "contrast": repr(contrast[0])[:300],
        "ids": [t.id for t in window.state.tokens],
        "labels": [t.text for t in window.state.tokens],
        "selected": window.state.selection if found else None,
        "suggestions": [m.id for m in window.tokens.vocabulary.suggestions("th")],
        "service_running": window.state.tokenizer_service.running,
        "imported": sorted(m for m in sys.modules if m.split(".")[0] == "tokenizers"),
        "tried": Refuse.tried,
        "core_tokens": "explorer.core.tokenizer.tokens" in sys.modules,  # the module that wraps it
        "phrase": phrase,
        "mapped": len(window.map_pane.data.nb.ids),
    }
    service = window.state.tokenizer_service
    window.close()
    out["service_after_close"] = service.running
    print(json.dumps(out))
    """
)


@pytest.fixture
def bpe_model(tmp_path) -> Path:
    write_model(tmp_path / "bpe", rows=420, dim=8, tokenizer="bpe")
    return tmp_path / "bpe"


def test_the_window_process_never_imports_the_rust_tokenizer(bpe_model, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    root = str(Path(explorer.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    typed, pasted = TEXT[:23], TEXT[23:]
    assert typed.isascii()
    args = [str(bpe_model), str(tmp_path / "settings.ini"), f"{typed}|{pasted}"]
    run = subprocess.run(
        [sys.executable, "-c", WINDOW_SCRIPT, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    # neither imported nor constructed in the window's process, nor even tried
    assert out["imported"] == [] and out["tried"] == [] and not out["core_tokens"]
    assert out["mapped"] == 30 and out["phrase"][1] > 0, out["phrase"]
    assert out["learned"].startswith("LearnResult("), out["learned"]
    assert out["contrast"].startswith("[SourceContrast("), out["contrast"]
    reference = open_model(bpe_model).tokenizer
    assert reference is not None
    assert out["ids"] == [t.id for t in reference.encode(TEXT)]
    assert out["labels"] == [t.text for t in reference.encode(TEXT)]
    assert out["selected"] == [reference.find("the")]
    assert reference.find("the") in out["suggestions"]
    assert out["service_running"] and not out["service_after_close"]
