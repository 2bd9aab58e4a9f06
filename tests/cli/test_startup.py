"""The first minutes: light commands stay light, and no display gives one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from explorer.api.model import Model
from explorer.cli.common import used_rows
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.models import write_model

# ml_dtypes: 1-2 s to import (0.7); BF16 and F16 decode without it, only F8 needs it
HEAVY = ("numba", "llvmlite", "umap", "pynndescent", "sklearn", "scipy", "PySide6", "ml_dtypes")

SCRIPT = r"""
import contextlib, io, json, sys
PRELUDE
import explorer.cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = explorer.cli.main(ARGV)
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
print(json.dumps({"code": code, "heavy": heavy, "out": out.getvalue()}))
"""


def heavy_imports(argv: list[str], prelude: str = "") -> dict:
    code = (
        SCRIPT.replace("PRELUDE", prelude)
        .replace("ARGV", repr(argv))
        .replace("set(HEAVY)", f"set({HEAVY!r})")
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["info", "--json"],
        ["tokenize", "The cat sat", "--json"],
        ["vector", "--id", "3710", "--json"],
        ["vector", "--token", "cat", "--format", "csv"],
    ],
)
def test_light_commands_do_not_import_heavy_libraries(argv):
    result = heavy_imports(argv)
    assert result["code"] == 0 and result["out"]
    assert result["heavy"] == []


def test_the_heavy_import_check_would_see_numba():
    """Guard: the same check reports numba when a command does import it."""
    result = heavy_imports(["info", "--json"], prelude="import numba")
    assert result["heavy"][:2] == ["llvmlite", "numba"]


def test_one_label_matches_the_whole_vocabulary_labels(tmp_path):
    write_model(tmp_path, rows=420, dim=4, tokenizer="bpe")  # rows beyond the vocabulary too
    for path in (demo_model_dir(), tmp_path):
        model = open_model(path)
        ids = range(model.rows) if model.rows < 1000 else range(0, model.rows, 37)
        one = Model(model)  # its label() reads one id, not the whole vocabulary
        assert [one.label(i) for i in ids] == [model.label(i) for i in ids]
        model.close()


def no_display_env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    return {**env, **extra}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland are Linux's")
@pytest.mark.parametrize("argv", [[], ["gui"], ["gui", str(demo_model_dir())]])
def test_no_display_is_one_line_and_exit_2(argv):
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=no_display_env(),
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no display" in lines[0]
    assert "QT_QPA_PLATFORM=offscreen" in lines[0] and "--screenshot" in lines[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland are Linux's")
def test_screenshot_still_works_without_a_display(tmp_path):
    out = tmp_path / "w.png"
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "gui", "--screenshot", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        env=no_display_env(HOME=str(tmp_path)),
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_used_rows_from_one_vocabulary_call_matches_the_model(tmp_path):
    write_model(tmp_path, rows=420, dim=4, tokenizer="bpe")
    for path in (demo_model_dir(), tmp_path):
        fast, slow = open_model(path), open_model(path)
        mask = used_rows(fast)
        assert mask is fast.used_rows and not mask.flags.writeable
        np.testing.assert_array_equal(mask, slow.used_rows)
        assert fast.info() == slow.info()
        fast.close()
        slow.close()


def test_quick_exit_keeps_the_whole_output_and_the_exit_code(tmp_path):
    """`info`/`vector` end with os._exit: stdout must be flushed and errors must still be 2."""
    env = {**os.environ, "HOME": str(tmp_path)}
    run = [sys.executable, "-m", "explorer"]
    proc = subprocess.run([*run, "vector", "--id", "3710", "--json"], capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["values"]) == 384
    proc = subprocess.run([*run, "vector", "--id", "99999999"], capture_output=True, env=env)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    buffered = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}  # fails at the flush
    with open("/dev/full", "w") as full:  # a full disk behind stdout is not a success
        proc = subprocess.run(
            [*run, "info", "--json"], stdout=full, stderr=subprocess.PIPE, env=buffered
        )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "cannot write to standard output" in lines[0], lines


@pytest.mark.parametrize("dtype", ["BF16", "F16", "F8_E4M3"])
def test_only_f8_files_import_ml_dtypes(tmp_path, dtype):
    matrix = write_model(tmp_path, rows=64, dim=8, dtype=dtype)
    for argv in (["info", "--json"], ["vector", "--id", "5", "--json"]):
        result = heavy_imports([*argv, "-m", str(tmp_path)])
        assert result["code"] == 0
        assert result["heavy"] == ([] if dtype != "F8_E4M3" else ["ml_dtypes"])
    values = json.loads(result["out"])["values"]
    assert values == matrix[5].astype(np.float32).tolist()
