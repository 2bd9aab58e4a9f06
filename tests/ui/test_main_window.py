"""The main window with tiny real models: chips, viewer values, errors, drops, recent, search."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from explorer.app import settings as recent
from explorer.app.state import AppState
from explorer.ui.window.main_window import MainWindow
from tests.support.models import word_model
from tests.support.paints import LayoutRequests
from tests.support.ui import idle


def type_text(qtbot, window: MainWindow, text: str) -> list:
    with qtbot.waitSignal(window.state.tokensChanged, timeout=30000) as blocker:
        qtbot.keyClicks(window.token_pane.editor, text)
    idle(qtbot, window)
    return blocker.args[0]


def click_chip(qtbot, window: MainWindow, index: int, modifier=Qt.KeyboardModifier.NoModifier):
    chips = window.token_pane.chips
    centre = chips.chip_rect(index).center()
    with qtbot.waitSignal(window.rows_view.controller.lane.finished, timeout=30000):
        qtbot.mouseClick(chips, Qt.MouseButton.LeftButton, modifier, centre)
    idle(qtbot, window)


def test_a_click_re_lays_out_the_panes_it_changes_not_the_whole_window(qtbot, window):
    """A new title, caption or neighbour list re-laid out the main window on every click (every
    pane's size hints asked again, 2-4 ms): the viewer and the neighbours pane are fenced."""
    type_text(qtbot, window, "the cat sat on the mat")
    click_chip(qtbot, window, 0)
    qtbot.wait(100)
    requests = LayoutRequests(window)
    for index in (1, 2, 3, 4):
        click_chip(qtbot, window, index)
        qtbot.waitUntil(lambda: window.neighbors.latest is not None, timeout=30000)
        qtbot.wait(50)
    assert window.viewer.rows[0].id == window.state.selection[0]
    assert requests.count == 0


def test_typing_updates_chips(qtbot, window):
    tokens = type_text(qtbot, window, "The cat sat")
    assert [t.id for t in tokens] == [3, 4, 5]
    chips = window.token_pane.chips
    assert [t.text for t in chips.tokens] == ["the", "cat", "sat"]
    assert "3 tokens" in window.token_pane.counts.text()
    assert "3.67\u00a0characters\u00a0per\u00a0token" in window.token_pane.counts.text()
    # more typing replaces the chips; the debounce sends only the final text
    tokens = type_text(qtbot, window, " on the mat")
    assert [t.id for t in tokens] == [3, 4, 5, 6, 3, 7]
    assert len(chips.tokens) == 6
    # special tokens toggle
    with qtbot.waitSignal(window.state.tokensChanged, timeout=30000) as blocker:
        window.token_pane.special.setChecked(True)
    assert [t.id for t in blocker.args[0]][0] == 1 and blocker.args[0][-1].special
    idle(qtbot, window)


def test_clicking_a_chip_shows_exact_values_of_that_row(qtbot, window, tiny_model):
    _, matrix = tiny_model
    type_text(qtbot, window, "the cat sat")
    click_chip(qtbot, window, 1)
    assert window.state.selection == [4]
    rows = window.viewer.rows
    assert [r.id for r in rows] == [4]
    np.testing.assert_array_equal(rows[0].values, matrix[4].astype(np.float32))
    assert rows[0].raw.tobytes() == matrix[4].tobytes()
    assert window.viewer.showing_rows
    assert window.token_pane.chips.selected == {4}
    # Ctrl-click adds a second row, then the viewer overlays both
    click_chip(qtbot, window, 2, Qt.KeyboardModifier.ControlModifier)
    assert window.state.selection == [4, 5]
    assert [r.id for r in window.viewer.rows] == [4, 5]
    np.testing.assert_array_equal(window.viewer.rows[1].values, matrix[5].astype(np.float32))


def test_chip_tooltip_names_id_piece_and_bytes(window, qtbot):
    from explorer.ui.tokens.chips import token_tooltip

    tokens = type_text(qtbot, window, "cat")
    tip = token_tooltip(tokens[0])
    assert "id 4" in tip and "'cat'" in tip and "63 61 74" in tip


def test_bad_file_shows_error_and_keeps_old_model(qtbot, window, tmp_path):
    old = window.state.model
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{not json")
    with qtbot.waitSignal(window.state.modelFailed, timeout=30000):
        window.open_path(str(bad))
    idle(qtbot, window)
    assert window.state.model is old
    assert window.error_box is not None and window.error_box.isVisible()
    assert "bad.safetensors" in window.error_box.text()
    assert window.model.panel.values["Shape"].text() == "16 × 8"
    window.error_box.close()


def _drop(window: MainWindow, path: str) -> tuple[bool, bool]:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    pos = QPointF(window.width() / 2, window.height() / 2)
    actions = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(
        pos.toPoint(), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dragEnterEvent(enter)
    drop = QDropEvent(pos, actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    return enter.isAccepted(), drop.isAccepted()


# PySide6 marks the QPoint constructor deprecated but offers no QPointF one for drag-enter.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_drag_and_drop_opens_a_model(qtbot, window, tmp_path):
    other, matrix = word_model(tmp_path / "other", rows=20, dim=12, seed=3)
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        accepted = _drop(window, str(other))
    assert accepted == (True, True)
    idle(qtbot, window)
    assert window.state.model.rows == 20 and window.state.model.dim == 12
    assert window.model.panel.values["Shape"].text() == "20 × 12"
    # text that is not a file is refused
    mime = QMimeData()
    mime.setText("hello")
    enter = QDragEnterEvent(
        QPoint(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dragEnterEvent(enter)
    assert not enter.isAccepted()


def test_recent_files_are_remembered_and_reopen(qtbot, make_window, tmp_path, tiny_model):
    first, _ = tiny_model
    window = make_window(first, persist=True)
    other, _ = word_model(tmp_path / "second", rows=18, dim=4, seed=1)
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        window.open_path(str(other))
    idle(qtbot, window)
    recent.wait_for_writes()
    items = recent.recent_models(window.settings)
    assert items[:2] == [str(other.resolve()), str(first.resolve())]
    actions = [a for a in window.recent_menu.actions() if a.data()]
    assert [a.data() for a in actions] == items
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        actions[1].trigger()
    idle(qtbot, window)
    assert window.state.model.rows == 16
    recent.wait_for_writes()
    assert recent.recent_models(window.settings)[0] == str(first.resolve())
    # a new window with the same settings store sees the same list
    again = MainWindow(AppState(), window.settings)
    qtbot.addWidget(again)
    assert [a.data() for a in again.recent_menu.actions() if a.data()][:2] == [
        str(first.resolve()),
        str(other.resolve()),
    ]


def test_opening_a_model_writes_the_settings_file_off_the_gui_thread(
    qtbot, make_window, tmp_path, tiny_model
):
    """QSettings.sync() waits for the disk twice (fdatasync): on the GUI thread it froze the
    window for 420 ms while the index build read the model file from disk. A setValue on the
    window's own QSettings would sync there on the next turn, so it gets none either."""
    from PySide6.QtCore import QSettings

    calls = []

    class Recording(QSettings):
        def setValue(self, key, value):
            calls.append(("setValue", key))
            super().setValue(key, value)

        def sync(self):
            calls.append(("sync", None))
            super().sync()

    ini = str(tmp_path / "settings.ini")
    win = make_window(
        tiny_model[0], settings=Recording(ini, QSettings.Format.IniFormat), persist=True
    )
    assert calls == []
    recent.wait_for_writes()
    written = recent.recent_models(QSettings(ini, QSettings.Format.IniFormat))
    assert written == [str(tiny_model[0].resolve())]
    assert [a.data() for a in win.recent_menu.actions() if a.data()] == written


def test_opening_and_switching_models_starts_no_thread_on_the_gui_thread(
    qtbot, make_window, tmp_path, monkeypatch
):
    """Thread.start waits until the new thread has run: on the GUI thread, as a model opened
    with both cores busy, that took 26 ms. The recent list's write and the old tokenizer
    child's reaping go to threads started with the app (explorer/app/errands.py)."""
    from PySide6.QtCore import QSettings

    first, _ = word_model(tmp_path / "first")
    other, _ = word_model(tmp_path / "other", seed=1)
    on_gui_thread = []
    start = threading.Thread.start

    def recorded(thread):
        if threading.current_thread() is threading.main_thread():
            on_gui_thread.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", recorded)
    ini = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = make_window(first, settings=ini, persist=True)
    old_service = win.state.tokenizer_service
    with qtbot.waitSignal(win.state.modelChanged, timeout=30000):
        win.open_path(str(other))
    qtbot.waitUntil(lambda: not win.pending and not old_service.running, timeout=30000)
    recent.wait_for_writes()
    assert on_gui_thread == []
    written = recent.recent_models(
        QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    )
    assert written == [str(other.resolve()), str(first.resolve())]  # the errands did run


def test_recent_writes_in_quick_succession_keep_every_path(tmp_path):
    """Each write reads the list on the settings writer, after the writes before it: two models
    opened before the first write has run are both remembered, the newest first."""
    from PySide6.QtCore import QSettings

    ini = str(tmp_path / "settings.ini")
    settings = QSettings(ini, QSettings.Format.IniFormat)
    paths = [tmp_path / name for name in ("a", "b", "c")]
    for path in paths:
        recent.add_recent(settings, path)
    recent.wait_for_writes()
    on_disk = recent.recent_models(QSettings(ini, QSettings.Format.IniFormat))
    assert on_disk == [str(p.resolve()) for p in reversed(paths)]
    recent.clear_recent(settings)
    recent.wait_for_writes()
    assert recent.recent_models(QSettings(ini, QSettings.Format.IniFormat)) == []


def test_search_box_selects_by_text_and_id(qtbot, window, tiny_model):
    _, matrix = tiny_model
    search = window.search
    if window.tokens.vocabulary.index is None:
        with qtbot.waitSignal(window.tokens.vocabulary.indexReady, timeout=30000):
            pass
    window.focus_search()
    qtbot.keyClicks(search, "kit")
    assert [m.label for m in search.matches] == ["kitten"]
    with qtbot.waitSignal(window.rows_view.controller.lane.finished, timeout=30000):
        qtbot.keyClick(search, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert window.state.selection == [10]
    assert window.viewer.rows[0].id == 10
    np.testing.assert_array_equal(window.viewer.rows[0].values, matrix[10].astype(np.float32))
    search.clear()
    qtbot.keyClicks(search, "#12")
    assert [m.id for m in search.matches] == [12]
    with qtbot.waitSignal(window.state.selectionChanged, timeout=30000):
        qtbot.keyClick(search, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert window.state.selection == [12]


def test_find_asks_the_tokenizer_on_a_worker(qtbot, window, monkeypatch):
    """A word the vocabulary does not list is encoded, which may wait on the tokenizer's process
    (busy with a long paste): Return must not make the window wait for it."""
    tokenizer = window.state.model.tokenizer
    threads = []

    def find(text):
        threads.append(threading.current_thread())
        return type(tokenizer).find(tokenizer, text)

    monkeypatch.setattr(tokenizer, "find", find)
    window.focus_search()
    qtbot.keyClicks(window.search, "kitten")
    window.search.completer_.popup().hide()  # Return reads the text, not a suggestion
    with qtbot.waitSignal(window.state.selectionChanged, timeout=30000) as blocker:
        qtbot.keyClick(window.search, Qt.Key.Key_Return)
    assert blocker.args[0] == [10]
    assert threads and threading.main_thread() not in threads
    idle(qtbot, window)


def test_shortcuts_focus_panes_and_settings_survive(qtbot, make_window, tiny_model):
    window = make_window(tiny_model[0], persist=True)
    window.activateWindow()
    window.focus_text()
    assert QApplication.focusWidget() is window.token_pane.editor
    window.focus_search()
    assert QApplication.focusWidget() is window.search
    window.close()
    assert window.settings.value("window/geometry") is not None


def test_neighbors_follow_the_selection_and_a_click_selects_one(qtbot, window, tiny_model):
    _, matrix = tiny_model
    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000) as blocker:
        window.state.select([4])
    found = blocker.args[0]
    m = matrix.astype(np.float64)
    cos = m @ m[4] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[4]))
    cos[4] = -np.inf
    best = int(np.argmax(cos))
    assert int(found.result.ids[0]) == best
    idle(qtbot, window)
    table = window.neighbors_pane.table
    assert table.model().rowCount() == len(found.result.ids)
    rect = table.visualRect(table.model().index(0, 1))
    with qtbot.waitSignal(window.state.selectionChanged, timeout=30000) as sel:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sel.args[0] == [best]
    idle(qtbot, window)
    assert [r.id for r in window.viewer.rows] == [best]


def test_a_model_without_tokenizer_is_browsed_by_id(qtbot, window, tmp_path):
    folder, matrix = word_model(tmp_path / "no-tokenizer", rows=12, dim=6, seed=5)
    (folder / "tokenizer.json").unlink()
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        window.open_path(str(folder))
    idle(qtbot, window)
    assert not window.token_pane.editor.isEnabled()
    assert "no tokenizer" in window.model.panel.values["Tokenizer"].text()
    window.focus_search()
    qtbot.keyClicks(window.search, "#7")
    with qtbot.waitSignal(window.state.selectionChanged, timeout=30000):
        qtbot.keyClick(window.search, Qt.Key.Key_Return)
    idle(qtbot, window)
    assert window.viewer.rows[0].id == 7 and window.viewer.rows[0].label == "#7"
    np.testing.assert_array_equal(window.viewer.rows[0].values, matrix[7].astype(np.float32))


def test_find_takes_the_cli_query_language_and_clears_on_another_selection(qtbot, window):
    search = window.search
    window.focus_search()
    qtbot.keyClicks(search, "cat - dog + kitten")
    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000) as blocker:
        qtbot.keyClick(search, Qt.Key.Key_Return)
    assert blocker.args[0].description == "cat - dog + kitten"
    idle(qtbot, window)
    assert "Neighbours of cat - dog + kitten" in window.neighbors_pane.status.text()
    assert search.text() == "cat - dog + kitten"  # kept while its neighbours are shown
    with qtbot.waitSignal(window.neighbors.resultsReady, timeout=30000):
        window.state.select([4])
    assert search.text() == ""
    idle(qtbot, window)


def test_model_panel_shows_every_wrapped_line_in_a_small_window(qtbot, make_window):
    """The docks are sized before a model's text is known; at 1024 × 700 the demo's 'Output head'
    and 'Tokenizer' wrap to two lines, and the second one was cut off."""
    from explorer.core.resources import demo_model_dir

    win = make_window(demo_model_dir(), size=(1024, 700), timeout=120000)
    qtbot.wait(50)
    panel = win.model.panel
    for name, label in panel.values.items():
        needed = (
            label.heightForWidth(label.width()) if label.wordWrap() else label.sizeHint().height()
        )
        assert label.height() >= needed, name
        assert label.geometry().bottom() < panel.height(), name
    assert panel.values["Tokenizer"].heightForWidth(panel.values["Tokenizer"].width()) > (
        panel.values["Dtype"].height()
    )  # it does wrap here, so the check above means something


def test_a_selection_uncovers_the_viewer_before_its_rows_arrive(qtbot, window):
    """The whole viewer's first paint after the empty state and the new row's paint go in two
    turns of the event loop, not one: the content shows as soon as the rows are asked for."""
    type_text(qtbot, window, "the cat sat")
    assert not window.viewer.showing_rows
    window.state.select([4])
    assert window.viewer.showing_rows and window.viewer.rows == []  # no row read yet
    qtbot.waitUntil(lambda: [r.id for r in window.viewer.rows] == [4], timeout=30000)
    window.state.select([])
    assert not window.viewer.showing_rows
    idle(qtbot, window)


def test_help_says_what_the_window_shows_and_leads_to_explain(qtbot, window):
    actions = [a.text() for a in window.host.menu("help").actions()]
    assert "&What am I looking at?" in actions
    box = window.show_guide()
    qtbot.waitExposed(box)
    assert "row" in box.text() and "Explain" in box.text()
    explain = next(b for b in box.buttons() if "Explain" in b.text())
    explain.click()
    assert window.centre.currentWidget() is window.analysis.explain_view
    box.close()
