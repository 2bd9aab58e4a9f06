"""`embedding-explorer gui --screenshot` through a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

from PySide6.QtGui import QImage

from explorer.ui.window.screenshot import DEFAULT_SIZE as SCREENSHOT_SIZE


def run_gui(*args: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)  # the command must choose offscreen by itself
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # never touch the user's settings
    return subprocess.run(
        [sys.executable, "-m", "explorer", "gui", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
    )


def test_screenshot_of_the_demo_with_text_and_selection(tmp_path):
    out = tmp_path / "window.png"
    proc = run_gui(
        "--screenshot",
        str(out),
        "--text",
        "The cat sat on the mat",
        "--select",
        "cat",
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert not image.isNull()
    assert (image.width(), image.height()) == SCREENSHOT_SIZE
    # not blank: many distinct colours (text, chips, plot, heatmap)
    small = image.scaled(160, 100)
    colours = {small.pixel(x, y) for x in range(small.width()) for y in range(small.height())}
    assert len(colours) > 50


def test_screenshot_at_a_chosen_size_of_a_finished_map(tmp_path):
    out = tmp_path / "map.png"
    proc = run_gui(
        *("--screenshot", str(out), "--size", "1024x700", "--select", "cat"),
        *("--map", "done"),
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1024, 700)


def test_screenshot_of_another_tab_and_bad_tab_or_size(tmp_path):
    out = tmp_path / "stats.png"
    proc = run_gui("--screenshot", str(out), "--tab", "Statistics", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not QImage(str(out)).isNull()
    for bad, words in ((("--tab", "nope"), "no such tab"), (("--size", "12x9"), "320")):
        proc = run_gui("--screenshot", str(tmp_path / "x.png"), *bad, tmp_path=tmp_path)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], lines


def test_screenshot_with_a_bad_path_fails_with_one_line(tmp_path):
    out = tmp_path / "never.png"
    proc = run_gui(str(tmp_path / "missing"), "--screenshot", str(out), tmp_path=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing" in lines[0] and "no such file" in lines[0]
    assert not out.exists()


def test_screenshot_with_a_malformed_model_fails_with_one_line(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x00" * 3)
    proc = run_gui(str(bad), "--screenshot", str(tmp_path / "x.png"), tmp_path=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "bad.safetensors" in proc.stderr


def test_screenshot_with_a_token_that_is_not_one_fails_with_one_line(tmp_path):
    out = tmp_path / "never.png"
    proc = run_gui("--screenshot", str(out), "--select", "#99999999", tmp_path=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "out of range" in lines[0]
    assert not out.exists()


def test_screenshot_into_a_missing_folder_names_the_folder(tmp_path):
    out = tmp_path / "no-such-dir" / "x.png"
    proc = run_gui("--screenshot", str(out), tmp_path=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"no folder {tmp_path / 'no-such-dir'}" in lines[0]


def test_font_database_chatter_is_filtered(qapp):
    from PySide6.QtCore import QLoggingCategory

    from explorer.ui.window.launch import QUIET_LOG_RULES

    QLoggingCategory.setFilterRules(QUIET_LOG_RULES)  # what launch() sets at start-up
    assert not QLoggingCategory("qt.text.font.db").isWarningEnabled()
    assert QLoggingCategory("qt.widgets").isWarningEnabled()


def test_the_text_pane_keeps_its_text_between_launches(qapp, tmp_path):
    import argparse

    from PySide6.QtCore import QSettings

    from explorer.app.settings import MAX_SAVED_TEXT, save_text
    from explorer.ui.window.launch import FIRST_RUN_TEXT, initial_text

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    plain = argparse.Namespace(text=None, screenshot=None)
    assert initial_text(plain, settings) == FIRST_RUN_TEXT  # first launch: something to click
    save_text(settings, "king - man + woman")  # what the window held when it closed
    assert initial_text(plain, settings) == "king - man + woman"  # second launch: the same
    save_text(settings, "")  # cleared on purpose: stays cleared
    assert initial_text(plain, settings) == ""
    save_text(settings, "x" * (MAX_SAVED_TEXT + 1))  # too long to keep: the last one stays
    assert initial_text(plain, settings) == ""
    given = argparse.Namespace(text="a b", screenshot=None)
    assert initial_text(given, settings) == "a b"
    shot = argparse.Namespace(text=None, screenshot="x.png")
    assert initial_text(shot, settings) is None


def test_screenshot_of_the_cosine_tab_of_several_tokens(tmp_path):
    out = tmp_path / "cosine.png"
    proc = run_gui(
        *("--screenshot", str(out), "--tab", "cosine"),
        *("--select", "cat", "--select", "dog", "--select", "#3899"),
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert not QImage(str(out)).isNull()
    proc = run_gui(
        "--screenshot", str(out), "--tab", "cosine", "--select", "cat", tmp_path=tmp_path
    )
    assert proc.returncode == 2 and "two or more" in proc.stderr


def test_the_documented_tabs_are_the_windows(window):
    """`--tab` is checked before Qt starts, against a list kept in the CLI: the same names."""
    from explorer.cli.gui import TABS
    from explorer.ui.window.screenshot import VIEWER_TABS

    assert list(TABS) == window.host.tab_keys() + VIEWER_TABS
