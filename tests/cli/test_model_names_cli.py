"""`-m demo` is the built-in demo in every command; the help and the "not a model file" error
name every format that opens."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_demo_names_the_built_in_demo(tmp_path):
    default = json.loads(run("info", "--json").stdout)
    named = run("info", "-m", "demo", "--json", cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["path"] == default["path"]
    both = run("compare", "-m", "demo", "-m", "demo", "--token", "cat", "-k", "3", cwd=tmp_path)
    assert both.returncode == 0 and "overlap 3 of 3" in both.stdout, both.stderr


def test_a_folder_named_demo_is_still_that_folder(tmp_path):
    (tmp_path / "demo").mkdir()
    out = run("info", "-m", "demo", cwd=tmp_path)
    assert out.returncode == 2 and "holds no .safetensors" in out.stderr


def test_help_and_errors_list_every_format(tmp_path):
    text = " ".join(run("vector", "--help").stdout.split())
    for kind in (".gguf", ".safetensors", ".npy", ".vec", "word2vec", "demo"):
        assert kind in text, kind
    other = tmp_path / "notes.xyz"
    other.write_text("hello")
    out = run("info", "-m", str(other))
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1
    assert "not a model file" in out.stderr and ".gguf" in out.stderr and ".npy" in out.stderr


def test_the_window_opens_demo_by_name(tmp_path):
    shot = tmp_path / "w.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "demo", "--screenshot", str(shot)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
