"""The tokenizer runs in a child process: the window's process never imports `tokenizers`, and
the service's answers equal the in-process tokenizer's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from core.fixtures import write_model

import explorer
from explorer.app import tuning
from explorer.app.state import AppState
from explorer.app.tokenizer_service import TokenizerService, open_with_tokenizer
from explorer.core.errors import Cancelled, ModelFormatError
from explorer.core.model.open import open_model

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
    window.learning.trainingDone.connect(learned.append)
    window.learning.failed.connect(learned.append)
    window.learning.contrastReady.connect(contrast.append)
    window.learning.contrastFailed.connect(contrast.append)
    window.learning.start(LearnParams(dim=8, epochs=1, map_tokens=20))
    wait(lambda: learned)
    window.learning.measure_twin()
    wait(lambda: contrast)
    out = {
        "learned": repr(learned[0])[:300],
        "contrast": repr(contrast[0])[:300],
        "ids": [t.id for t in window.state.tokens],
        "labels": [t.text for t in window.state.tokens],
        "selected": window.state.selection if found else None,
        "suggestions": [m.id for m in window.vocabulary.suggestions("th")],
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


def test_service_encodes_like_the_tokenizer_and_restarts_after_a_crash(bpe_model):
    opened = open_with_tokenizer(bpe_model, None)
    reference = open_model(bpe_model).tokenizer
    assert opened.service is not None and reference is not None
    try:
        tok = opened.model.tokenizer
        assert tok is not None and not hasattr(tok, "tokenizer")  # no Rust object here
        assert tok.encode(TEXT, special=True) == reference.encode(TEXT, special=True)
        ids, offsets, _ = opened.service.encode_ids("x" * 5000, False)
        assert offsets[-1, 1] == 5000 and ids.size >= 1
        opened.service._proc.kill()  # a crashed child is started again on the next request
        opened.service._proc.wait()
        assert tok.encode("cat sat") == reference.encode("cat sat")
    finally:
        opened.service.close()
    assert not opened.service.running
    with pytest.raises(Cancelled):
        opened.service.encode_ids("cat", False)


def test_opening_another_model_does_not_wait_for_the_old_child_to_exit(qtbot, bpe_model):
    """A dying child holding a large tokenizer takes 50-150 ms to exit on a busy machine: the
    GUI thread kills it and goes on; it is reaped on another thread."""
    state = AppState()
    first = open_with_tokenizer(bpe_model, None)
    state.set_opened(first)
    reaped_on = []
    wait = first.service._proc.wait

    def waited(*args, **kwargs):
        reaped_on.append(threading.current_thread())
        return wait(*args, **kwargs)

    first.service._proc.wait = waited
    state.set_opened(open_with_tokenizer(bpe_model, None))
    qtbot.waitUntil(lambda: not first.service.running and bool(reaped_on), timeout=10000)
    assert threading.main_thread() not in reaped_on
    assert state.tokenizer_service.running
    state.close_tokenizer()
    state.jobs.shutdown()


def test_a_model_without_a_tokenizer_ends_the_child(tmp_path):
    write_model(tmp_path / "bare", rows=16, dim=4)
    opened = open_with_tokenizer(tmp_path / "bare", None)
    assert opened.model.tokenizer is None and opened.service is None


def test_a_broken_tokenizer_is_a_model_error(tmp_path):
    write_model(tmp_path / "broken", rows=16, dim=4)
    (tmp_path / "broken" / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFormatError, match="tokenizer"):
        open_with_tokenizer(tmp_path / "broken", None)


def test_offsets_and_ids_arrive_as_arrays(bpe_model):
    service = TokenizerService(bpe_model)
    try:
        tok, warnings = service.wait_ready(420)
        assert tok is not None and warnings == []
        ids, offsets, special = service.encode_ids("the cat", True)
        assert ids.dtype == np.int64 and offsets.shape == (ids.size, 2) and special.dtype == bool
        assert special.any()  # <s> … </s>
    finally:
        service.close()


@pytest.mark.parametrize("which", ["bpe", "demo"])
def test_token_kinds_made_in_the_child_equal_the_kinds_made_here(which, bpe_model):
    from explorer.core.analysis.kinds import token_kinds
    from explorer.core.resources import demo_model_dir

    path = bpe_model if which == "bpe" else demo_model_dir()
    opened = open_with_tokenizer(path, None)
    reference = open_model(path)
    try:
        tok = opened.model.tokenizer
        assert tok is not None and tok.kinds_elsewhere is not None
        there = token_kinds(opened.model)  # asks the child, "pending" until its thread is done
        here = token_kinds(reference)  # the real tokenizer, in this process
        assert np.array_equal(there.codes, here.codes)
        assert np.array_equal(there.word_start, here.word_start)
        assert np.array_equal(there.continuation, here.continuation)
        assert len(set(here.codes.tolist())) > 3  # several kinds: the comparison means something
        assert tok.encode("cat sat") == reference.tokenizer.encode("cat sat")  # still serving
    finally:
        opened.service.close()
        reference.close()


@pytest.mark.parametrize("which", ["bpe", "demo"])
def test_find_box_index_sorted_in_the_child_answers_like_one_sorted_here(which, bpe_model):
    from explorer.app.controllers.tokens import build_index
    from explorer.core.resources import demo_model_dir
    from explorer.core.tokenizer.vocab_index import VocabIndex

    path = bpe_model if which == "bpe" else demo_model_dir()
    opened = open_with_tokenizer(path, None)
    try:
        tok = opened.model.tokenizer
        assert tok is not None and tok.order_elsewhere is not None
        there = build_index(opened.model)  # the child's order, labels decoded when asked
        here = VocabIndex([tok.labels[i] for i in range(opened.model.rows)])  # sorted here
        assert there._ids == here._ids
        for query in ["c", "ca", "cat", "th", "the", "##", "a", "[", "#5", "zzz", "Ġ", "e"]:
            assert there.search(query) == here.search(query), query
        assert any(there.search(q) for q in ["c", "th", "a"])  # the queries find something
    finally:
        opened.service.close()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread niceness is Linux's")
def test_a_vocabulary_job_in_the_child_is_niced_before_it_imports_anything():
    # a fresh interpreter, as the child is: what the job thread imports, and at what niceness
    script = textwrap.dedent(
        """
        import json, os, sys, threading
        seen = []

        class Watch:
            def find_spec(self, name, path=None, target=None):
                if threading.current_thread() is not threading.main_thread():
                    seen.append((name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
                return None

        from explorer.app import tokenizer_process
        sys.meta_path.insert(0, Watch())
        job = tokenizer_process._Job("probe", lambda: [__import__("fractions")] and [])
        job.thread.join(30)
        base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        print(json.dumps([base, seen]))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(explorer.__file__).parents[1],
    )
    assert run.returncode == 0, run.stderr
    base, imports = json.loads(run.stdout)
    niced = tuning.BACKGROUND_NICE
    assert ["fractions", max(base, niced)] in imports  # the watch sees the job's own import
    assert all(nice >= niced for _, nice in imports), imports
