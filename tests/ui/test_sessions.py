"""Sessions and slides in the window: save, open (also with the model gone), step, export."""

from __future__ import annotations

import re
import shutil

from PySide6.QtCore import Qt

from explorer.app.controllers.session import recent_sessions
from explorer.app.settings import wait_for_writes
from explorer.core.session import load_session
from explorer.ui.window.main_window import MainWindow
from tests.support.ui import idle


def set_view(qtbot, win: MainWindow) -> None:
    win.token_pane.set_text("abc ab")
    idle(qtbot, win)
    win.state.select([3, 5])
    win.neighbors_pane.k = 7
    win.map_pane.n.setValue(321)
    win.map_pane.method.setCurrentIndex(win.map_pane.method.findData("pca"))
    win.centre.setCurrentIndex(1)
    idle(qtbot, win)


def open_session(qtbot, win: MainWindow, path):
    with qtbot.waitSignal(win.sessions.controller.loaded, timeout=30000) as blocker:
        win.sessions.controller.open(path)
    idle(qtbot, win)
    return blocker.args[0]


def test_session_round_trip(qtbot, make_window, tiny_model, tmp_path):
    path, _ = tiny_model
    a = make_window(path)
    set_view(qtbot, a)
    a.slides.add_slide()
    a.sessions.save_to(tmp_path / "one.eesession.json")
    assert load_session(tmp_path / "one.eesession.json").model_status == "ok"

    b = make_window()  # no model open: the session opens it
    loaded = open_session(qtbot, b, tmp_path / "one.eesession.json")
    assert loaded.model_status == "ok" and loaded.message is None
    assert b.state.model is not None and b.state.model.path.resolve() == path.resolve()
    assert b.state.text == "abc ab" and b.token_pane.editor.toPlainText() == "abc ab"
    assert b.state.selection == [3, 5]
    assert b.centre.currentIndex() == 1
    assert b.neighbors_pane.k == 7
    assert b.map_pane.n.value() == 321 and b.map_pane.method.currentData() == "pca"
    assert len(b.slides.deck) == 1 and b.slides.deck.slides[0]["selection"] == [3, 5]
    wait_for_writes()
    assert str((tmp_path / "one.eesession.json").resolve()) in recent_sessions(b.settings)
    assert b.sessions.recent_menu.actions()


def test_session_with_a_missing_model_keeps_the_rest(qtbot, make_window, tiny_model, tmp_path):
    path, _ = tiny_model
    a = make_window(path)
    set_view(qtbot, a)
    a.slides.add_slide()
    a.sessions.save_to(tmp_path / "two.eesession.json")
    a.close()
    moved = tmp_path / "moved"
    shutil.move(str(path), str(moved))

    b = make_window()
    loaded = open_session(qtbot, b, tmp_path / "two.eesession.json")
    assert loaded.model_status == "missing"
    assert b.state.model is None
    assert b.error_box is not None and "was not found" in b.error_box.text()
    assert b.state.text == "abc ab" and b.centre.currentIndex() == 1
    assert b.neighbors_pane.k == 7 and b.map_pane.n.value() == 321
    assert len(b.slides.deck) == 1

    # the selection waits for a model: opening the moved one shows it
    with qtbot.waitSignal(b.state.selectionChanged, timeout=30000, check_params_cb=bool):
        b.open_path(str(moved))
    assert b.state.selection == [3, 5]


def test_bad_session_file_is_an_error_message(qtbot, make_window, tmp_path):
    win = make_window()
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else", "version": 1}', encoding="utf-8")
    with qtbot.waitSignal(win.sessions.controller.failed, timeout=30000):
        win.sessions.controller.open(bad)
    assert win.error_box is not None and "not an Embedding Explorer session" in win.error_box.text()


def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def test_two_slides_step_with_arrows_and_export_as_pdf_and_png(
    qtbot, make_window, tiny_model, tmp_path
):
    path, _ = tiny_model
    win = make_window(path)
    win.state.select([2])
    idle(qtbot, win)
    qtbot.keyClick(win, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    win.state.select([4])
    win.centre.setCurrentIndex(1)
    idle(qtbot, win)
    qtbot.keyClick(win, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert len(win.slides.deck) == 2

    qtbot.keyClick(win, Qt.Key.Key_F5)
    qtbot.keyClick(win, Qt.Key.Key_Left)
    idle(qtbot, win)
    assert win.state.selection == [2] and win.centre.currentIndex() == 0
    qtbot.keyClick(win, Qt.Key.Key_Right)
    idle(qtbot, win)
    assert win.state.selection == [4] and win.centre.currentIndex() == 1

    win.slides.export_pdf(tmp_path / "deck.pdf")
    data = (tmp_path / "deck.pdf").read_bytes()
    assert data.startswith(b"%PDF") and pdf_pages(data) == 2
    pngs = win.slides.export_png(tmp_path)
    assert [p.name for p in pngs] == ["slide-01.png", "slide-02.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)
    assert win.state.selection == [4]  # the view shown before the export is back


def run_gui(*args: str, tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # never touch the user's settings
    return subprocess.run(
        [sys.executable, "-m", "explorer", "gui", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
    )


def test_gui_session_option_opens_a_session_and_refuses_a_missing_file(tmp_path, tiny_model):
    from explorer.core.model.open import open_model
    from explorer.core.session import ModelRef, Session, save_session

    path, _ = tiny_model
    model = open_model(path)
    ref = ModelRef.of(model)
    model.close()
    save_session(Session(model=ref, text="abc", selection=[1]), tmp_path / "s.json")
    out = tmp_path / "w.png"
    proc = run_gui(
        "--session", str(tmp_path / "s.json"), "--screenshot", str(out), tmp_path=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"\x89PNG")

    proc = run_gui("--session", str(tmp_path / "nope.json"), tmp_path=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "nope.json" in lines[0] and "no such session" in lines[0]


def test_a_session_with_bad_fields_opens_the_rest_and_says_so(
    qtbot, make_window, tiny_model, tmp_path
):
    """Field by field: a metric that is none, k = 10**30 and NaN map coordinates are left out
    with one status line; the text, selection and tab are restored."""
    import json

    path, _ = tiny_model
    a = make_window(path)
    set_view(qtbot, a)
    file = tmp_path / "bad-fields.eesession.json"
    a.sessions.save_to(file)
    data = json.loads(file.read_text(encoding="utf-8"))
    data["neighbors"].update(metric="manhattan", k=10**30)
    data["map"]["layout"] = {"ids": [1, 2], "x": [0.0, float("nan")], "y": [0.0, 1.0]}
    file.write_text(json.dumps(data), encoding="utf-8")

    b = make_window()
    loaded = open_session(qtbot, b, file)
    assert len(loaded.dropped) == 3
    assert b.state.text == "abc ab" and b.state.selection == [3, 5]
    assert b.centre.currentIndex() == 1
    assert b.neighbors_pane.metric_name == "cosine" and b.neighbors_pane.k == 10
    message = b.statusBar().currentMessage()
    assert message.startswith("Opened the session without a bad field: neighbors.metric")
    assert "(and 2 more)" in message
