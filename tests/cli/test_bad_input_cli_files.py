"""Issue 40 through the command line: special, endless and huge input files are one line on
stderr and exit 2, without blocking or reading them whole."""

from __future__ import annotations

import io
import os
import types

import pytest

from tests.cli.test_bad_input_cli import assert_error, cli
from tests.core.test_bad_input_files import finishes
from tests.support.models import write_model

GB = 1 << 30


@pytest.fixture(scope="module")
def wp(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("wp")
    write_model(folder, rows=300, dim=8, tokenizer="wordpiece")
    return str(folder)


def special(tmp_path, kind: str) -> str:
    path = tmp_path / "input.txt"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(GB)
    else:
        return "/dev/zero"
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_tokenize_file(capsys, tmp_path, wp, kind):
    name = special(tmp_path, kind)
    finishes(lambda: assert_error(capsys, "tokenize", "-m", wp, "--file", name))


def test_tokenize_endless_stdin(capsys, wp, monkeypatch):
    with open("/dev/zero", "rb") as endless:
        monkeypatch.setattr("sys.stdin", types.SimpleNamespace(buffer=endless))
        line = finishes(lambda: assert_error(capsys, "tokenize", "-m", wp, "--file", "-"))
    assert "standard input: goes on past 32 MB" in line


def test_tokenize_stdin_within_the_cap_still_works(capsys, wp, monkeypatch):
    monkeypatch.setattr("sys.stdin", types.SimpleNamespace(buffer=io.BytesIO(b"the cat\n")))
    code, out, err = cli(capsys, "tokenize", "-m", wp, "--file", "-")
    assert code == 0 and out and not err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_learn_corpus(capsys, tmp_path, wp, kind):
    name = special(tmp_path, kind)
    out = str(tmp_path / "out")
    argv = ("learn", "-m", wp, "--corpus", name, "--epochs", "1", "--no-png", "--out", out)
    finishes(lambda: assert_error(capsys, *argv))
