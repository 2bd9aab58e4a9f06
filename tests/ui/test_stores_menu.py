"""File › Models on this computer: fixture stores in a temporary HOME, listed and opened."""

from __future__ import annotations

import pytest

from explorer.app.state import AppState
from explorer.ui.model.stores_menu import NONE_FOUND, StoresMenu
from explorer.ui.window.main_window import MainWindow
from tests.support.stores import make_hf_cache, make_ollama


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(var, raising=False)
    return home


def entries(menu: StoresMenu) -> list[tuple[str, bool]]:
    menu.refresh()  # what opening the menu does
    return [(a.text(), a.isSeparator()) for a in menu.actions()]


def test_an_empty_computer_says_so(qtbot, home):
    menu = StoresMenu(lambda p: None)
    qtbot.addWidget(menu)
    found = entries(menu)
    assert found == [(NONE_FOUND, False)]
    assert not menu.actions()[0].isEnabled()


def test_stores_are_listed_by_store_and_a_choice_opens_it(qtbot, home):
    make_hf_cache(home / ".cache" / "huggingface" / "hub", rows=40, dim=8)
    make_ollama(home / ".ollama" / "models", rows=30, dim=64)
    window = MainWindow(AppState(), persist=False)
    qtbot.addWidget(window)
    menu = window.model.stores_menu
    assert menu.menuAction() in window.host.menu("file").actions()  # File › Models on this computer
    found = entries(menu)
    texts = [t for t, _ in found]
    assert [t for t, section in found if section] == ["Hugging Face", "Ollama"]
    hf = next(t for t in texts if t.startswith("acme/tiny-lm"))
    assert "40 × 8 BF16" in hf
    assert any(t.startswith("tiny:1b") and "30 × 64 Q8_0" in t for t in texts)
    action = next(a for a in menu.actions() if a.text() == hf)
    with qtbot.waitSignal(window.state.modelChanged, timeout=30000):
        action.trigger()
    assert window.state.model.rows == 40
    qtbot.waitUntil(lambda: not window.pending, timeout=30000)
    window.close()
