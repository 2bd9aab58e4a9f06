"""Issue 11 through the command line: every case exits 0 or exits 2 with one stderr line.

In-process (`explorer.cli.main`) to stay fast; a few cases need a real process (closed
file descriptors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from explorer.cli import main
from explorer.core.limits import MAX_TEXT_CHARS
from tests.support.models import raw_safetensors, write_model

ROOT = Path(__file__).resolve().parents[2]
NOT_UTF8 = b"ab\xffc".decode("utf-8", errors="surrogateescape")
PREFIX = "embedding-explorer: error: "


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse usage errors
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_error(capsys, *argv: str, fragment: str = "") -> str:
    code, out, err = cli(capsys, *argv)
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith(PREFIX), err
    assert len(lines[0]) <= 400 and "Traceback" not in err
    assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def wp(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("wp")
    write_model(folder, rows=300, dim=8, tokenizer="wordpiece")
    return str(folder)


@pytest.fixture(scope="module")
def no_unk(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("nounk")
    write_model(folder, rows=16, dim=4)
    tok = Tokenizer(models.WordPiece({"a": 0, "b": 1, "##b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    return str(folder)


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["project", "--sample", "10", "--n-epochs", "100000000", "--json"], "10,000"),
        (["project", "--sample", "10", "--seed=-1", "--json"], "--seed"),
        (["project", "--sample", "10", "--seed", "99999999999", "--json"], "--seed"),
        (["project", "--sample", "0", "--json"], "--sample"),
        (["project", "--around", "#1", "-n", "1000000000", "--json"], "-n"),
        (["project", "--sample", "10", "--min-dist", "nan", "--json"], "--min-dist"),
        (["project", "--sample", "10", "--min-dist", "inf", "--json"], "--min-dist"),
        (["project", "--sample", "10", "--n-neighbors", "1", "--json"], "--n-neighbors"),
        (["neighbors", "--id", "1", "-k", "0"], "-k"),
        (["neighbors", "--id", "1", "-k", "1000000000"], "-k"),
        (["neighbors", "--id", "١٢"], "invalid int"),
        (["vector", "--id", "9" * 5000], "invalid int"),
        (["vector", "--id", "1_0"], "invalid int"),
        (["vector", "--token", "#" + "9" * 5000], "out of range"),
    ],
    ids=lambda v: " ".join(v)[:40] if isinstance(v, list) else None,
)
def test_numbers_are_capped(capsys, wp, argv, fragment):
    assert_error(capsys, *argv, "-m", wp, fragment=fragment)


@pytest.mark.parametrize(
    "argv",
    [
        ["vector", "--token", "ж"],
        ["neighbors", "--token", "ж"],
        ["project", "--around", "ж", "--json", "--method", "pca"],
        ["project", "--ids", "cat,ж", "--json", "--method", "pca"],
    ],
)
def test_out_of_vocabulary_token_is_an_error(capsys, wp, argv):
    assert_error(capsys, *argv, "-m", wp, fragment="not in the vocabulary")


@pytest.mark.parametrize(
    "argv",
    [
        ["tokenize", "zzz"],
        ["vector", "--token", "zzz"],
        ["neighbors", "--text", "zzz"],
        ["neighbors", "--expr", "a - zzz"],
        ["neighbors", "--token", "zzz"],
        ["project", "--text", "zzz", "--json", "--method", "pca"],
    ],
)
def test_wordpiece_without_unk_token(capsys, no_unk, argv):
    assert_error(capsys, *argv, "-m", no_unk, fragment="holds a word that is not in the vocabulary")


@pytest.mark.parametrize("ref", ["#²", "#١٢"])
def test_non_ascii_digits_are_not_ids(capsys, wp, ref):
    code, out, err = cli(capsys, "vector", "-m", wp, "--token", ref, "--json")
    assert code in (0, 2) and "Traceback" not in err
    if code == 0:
        assert json.loads(out)["id"] != 12
    else:
        assert len(err.splitlines()) == 1


def test_long_text_and_long_errors(capsys, wp):
    line = assert_error(capsys, "tokenize", "-m", wp, "x" * (MAX_TEXT_CHARS + 1), fragment="limit")
    assert f"{MAX_TEXT_CHARS:,}" in line
    line = assert_error(capsys, "neighbors", "-m", wp, "--expr", "cat +" * 12_000 + "+ +")
    assert len(line) < len(PREFIX) + 310
    line = assert_error(capsys, "neighbors", "-m", wp, "--token", "🐱ж" * 5000)
    assert len(line) < len(PREFIX) + 310


def test_not_utf8_title_is_refused_and_writes_nothing(capsys, wp, tmp_path):
    out = tmp_path / "map.svg"
    argv = ["project", "-m", wp, "--sample", "20", "--method", "pca", "--out", str(out)]
    assert_error(capsys, *argv, "--title", NOT_UTF8, fragment="not valid UTF-8")
    assert not out.exists()


def test_model_in_a_folder_whose_name_is_not_utf8(capsys, tmp_path):
    folder = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/m\xff\xfe"))
    (tmp_path / "plain").mkdir()
    write_model(tmp_path / "plain", rows=300, dim=8, tokenizer="wordpiece")
    (tmp_path / "plain").rename(folder)
    code, out, err = cli(capsys, "info", "-m", str(folder), "--json")
    assert code == 0, err
    assert json.loads(out)["rows"] == 300
    assert cli(capsys, "vector", "-m", str(folder), "--token", "cat")[0] == 0
    for name in ("map.svg", "map.json", "map.csv"):
        target = tmp_path / name
        argv = ["project", "-m", str(folder), "--sample", "30", "--method", "pca"]
        code, _, err = cli(capsys, *argv, "--out", str(target))
        assert code == 0, err
        text = target.read_bytes().decode("utf-8")  # valid UTF-8 throughout
        if name == "map.svg":
            assert "m\ufffd\ufffd" in text


@pytest.mark.parametrize("fill", [0.0, 1.0])
@pytest.mark.parametrize("out", ["x.json", "x.csv", "x.svg"])
@pytest.mark.parametrize("method", ["pca", "umap"])
def test_project_on_a_constant_matrix(capsys, tmp_path, fill, out, method):
    write_model(tmp_path / "m", matrix=np.full((64, 8), fill, np.float32), tokenizer="wordpiece")
    argv = ["project", "-m", str(tmp_path / "m"), "--ids", "1,2,3,4,5,6,7,8,9,10"]
    code, _, err = cli(capsys, *argv, "--method", method, "--out", str(tmp_path / out))
    assert code in (0, 2) and "Traceback" not in err
    assert code == 2 and len(err.splitlines()) == 1 or code == 0 and err == ""
    if code == 0 and out == "x.json":
        data = json.loads((tmp_path / out).read_text())
        assert data


def test_zero_width_embedding(capsys, tmp_path):
    header = {
        "model.embed_tokens.weight": {"dtype": "F32", "shape": [10, 0], "data_offsets": [0, 0]}
    }
    (tmp_path / "e.safetensors").write_bytes(raw_safetensors(header))
    for argv in (["info"], ["project", "--sample", "5", "--json"]):
        assert_error(capsys, *argv, "-m", str(tmp_path / "e.safetensors"), fragment="no data")


def test_fifo_model_via_cli(capsys, tmp_path):
    os.mkfifo(tmp_path / "model.safetensors")
    assert_error(capsys, "info", "-m", str(tmp_path), fragment="FIFO")


def test_deeply_nested_config_via_cli(capsys, tmp_path):
    write_model(tmp_path, rows=8, dim=4)
    (tmp_path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert_error(capsys, "info", "-m", str(tmp_path), fragment="nested too deeply")


def test_non_finite_rows_print_no_warnings(capsys, tmp_path):
    matrix = np.random.default_rng(0).standard_normal((64, 8)).astype(np.float32)
    matrix[3] = np.nan
    matrix[4] = np.inf
    matrix[5] = 0
    write_model(tmp_path, matrix=matrix, tokenizer="wordpiece")
    for metric in ("cosine", "dot", "l2"):
        argv = ["neighbors", "-m", str(tmp_path), "--id", "1", "--exact", "--metric", metric]
        code, out, err = cli(capsys, *argv)
        assert code == 0
        assert "Warning" not in err and len(err.splitlines()) <= 1  # the "note: … left out"
    code, out, err = cli(capsys, "vector", "-m", str(tmp_path), "--id", "3", "--json")
    assert code == 0 and err == "" and json.loads(out)["values"][0] is None


def test_huge_values_give_neighbors(capsys, tmp_path):
    matrix = (np.random.default_rng(0).uniform(-1, 1, (64, 8)) * 3e38).astype(np.float32)
    write_model(tmp_path, matrix=matrix, tokenizer="wordpiece")
    for metric in ("cosine", "dot", "l2"):
        argv = ["neighbors", "-m", str(tmp_path), "--id", "1", "--exact", "--metric", metric]
        code, out, err = cli(capsys, *argv, "--json")
        assert code == 0 and err == ""
        rows = json.loads(out)
        assert len(rows) == 10 and all(r["score"] is not None for r in rows)


def test_closed_stdout_in_process(capsys, monkeypatch, wp, tmp_path):
    monkeypatch.setattr(sys, "stdout", None)
    code = main(["info", "-m", wp, "--json"])
    assert code == 2
    assert "standard output is closed" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["vector", "-m", wp, "--id", "1", "--out", str(tmp_path / "v.csv")]) == 0


# -- real processes --------------------------------------------------------------------------------


def run(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], env=env, capture_output=True, timeout=300, **kw
    )


def test_closed_stdout_subprocess(wp):
    # fd 1 closed in the child after Python started (sys.stdout exists, writing fails)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, runpy, sys; os.close(1); sys.argv = ['x', 'info', "
            f"'-m', {wp!r}, '--json']; runpy.run_module('explorer', run_name='__main__')",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        timeout=300,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "standard output is closed" in err


def test_bad_arguments_subprocess(wp):
    proc = run(["project", "-m", wp, "--sample", "5", "--n-epochs", "100000000", "--json"])
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and "--n-epochs" in err


def test_stdout_closed_by_the_shell(wp):
    proc = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -m explorer info -m "{wp}" --json >&-'],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        timeout=300,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "standard output is closed" in err


def test_png_to_a_full_disk_is_one_line(wp, tmp_path):
    """A subprocess: PNG output creates a QGuiApplication, which later widget tests cannot share."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    (tmp_path / "full.png").symlink_to("/dev/full")
    argv = ["project", "-m", wp, "--sample", "20", "--method", "pca", "--out"]
    proc = run([*argv, str(tmp_path / "full.png")])
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and "cannot write PNG" in err and "libpng" not in err
