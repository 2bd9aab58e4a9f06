"""The model panel says whether the tokenizer belongs to the rows; File › Open tokenizer… reads
the rows through another tokenizer, checks it in the background and warns."""

from __future__ import annotations

from explorer.core.resources import demo_model_dir
from tests.support.mismatch import shifted_demo_tokenizer
from tests.support.ui import idle


def _open_tokenizer(qtbot, win, path) -> None:
    with qtbot.waitSignal(win.state.modelChanged, timeout=60000):
        win.model.match.open_tokenizer(str(path))
    idle(qtbot, win, 60000)


def test_a_shifted_tokenizer_is_named_in_the_panel_and_a_dialog(qtbot, make_window, tmp_path):
    win = make_window(demo_model_dir(), timeout=120000)
    match = win.model.panel.values["Match"]
    qtbot.waitUntil(lambda: match.text().startswith("✓ matches (variant pairs"), timeout=60000)
    file_menu = win.host.menu("file")
    assert "Open &tokenizer…" in [a.text() for a in file_menu.actions()]
    base = win.state.model
    _open_tokenizer(qtbot, win, shifted_demo_tokenizer(tmp_path, 7))
    model = win.state.model
    assert model is not base and model.matrix is base.matrix  # the same rows, another tokenizer
    assert model.tokenizer.vocab_size == 30522 + 7 and model.label(7) == "[PAD]"
    assert match.text().startswith("⚠ looks shifted by -7 ids")
    assert "spelling-variant pairs" in match.toolTip()
    meaning = "Token id's row is E[id − 7], so each row is labelled with the token 7 ids before"
    assert meaning in match.toolTip()
    assert win.error_box is not None and win.error_box.isVisible()
    assert "shifted by -7 ids" in win.error_box.text()
    assert "shifted" not in win.model.panel.values["Output head"].text()


def test_a_file_that_is_no_tokenizer_is_one_message(qtbot, make_window, tmp_path):
    win = make_window(demo_model_dir(), timeout=120000)
    base = win.state.model
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}")
    win.model.match.open_tokenizer(str(bad))
    qtbot.waitUntil(lambda: win.error_box is not None and win.error_box.isVisible(), timeout=60000)
    assert win.error_box.text().startswith("Could not open the tokenizer tokenizer.json.")
    assert win.state.model is base
    idle(qtbot, win, 60000)
    assert win.model.panel.values["Match"].text().startswith("✓ matches")
