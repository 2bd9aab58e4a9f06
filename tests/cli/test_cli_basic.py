"""The headless CLI (info, tokenize, vector) through real subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.models import safetensors_bytes, write_model, write_trap_pickle

DEMO = demo_model_dir()
INVALID_UTF8 = b"ab\xffc".decode("utf-8", errors="surrogateescape")  # passed to argv as bytes


def run_cli(
    *args: str, cwd=None, entry_point: bool = False, env: dict | None = None
) -> subprocess.CompletedProcess:
    if entry_point:
        beside = Path(sys.executable).with_name("embedding-explorer")  # a venv not on PATH
        exe = str(beside) if beside.is_file() else shutil.which("embedding-explorer")
        assert exe, "the embedding-explorer console script is not installed"
        cmd = [exe, *args]
    else:
        cmd = [sys.executable, "-m", "explorer", *args]
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        cwd=cwd,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )


def ok_json(*args: str, **kw):
    proc = run_cli(*args, **kw)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)  # the whole of stdout is one JSON document


def assert_one_line_error(proc: subprocess.CompletedProcess, fragment: str = "") -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert proc.stderr.endswith("\n")
    assert lines[0].startswith("embedding-explorer: error: ")
    assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def demo():
    model = open_model(DEMO)
    yield model
    model.close()


@pytest.mark.parametrize("entry_point", [False, True])
def test_info_json_on_demo(tmp_path, entry_point):
    info = ok_json("info", "--json", cwd=tmp_path, entry_point=entry_point)
    assert info["format"] == "safetensors"
    assert info["tensor"] == "embeddings.word_embeddings.weight"
    assert (info["rows"], info["dim"], info["dtype"]) == (30522, 384, "BF16")
    # an encoder with no output head says so instead of "tied"
    assert info["tied"] is None and info["output_tensor"] is None
    assert info["head"] == "no output head: an encoder (BertModel)" and info["warnings"] == []
    assert info["tokenizer_vocab_size"] == 30522
    assert [p.rsplit("/", 1)[-1] for p in info["files"]] == ["model.safetensors"]
    assert all(Path(p).is_file() for p in info["files"])


def test_info_text(tmp_path):
    proc = run_cli("info", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "30522 × 384  BF16" in proc.stdout
    assert "no output head: an encoder (BertModel)" in proc.stdout
    assert "(1 file, 23.4 MB)" in proc.stdout  # decimal megabytes, as in the window


def test_tokenize_json_fields(tmp_path):
    text = "Hello, cats and kittens!\tNaïve 東京"
    tokens = ok_json("tokenize", text, "--json", cwd=tmp_path)
    ref = Tokenizer.from_file(str(DEMO / "tokenizer.json"))
    ref.no_truncation()
    ref.no_padding()
    enc = ref.encode(text, add_special_tokens=False)
    assert [t["id"] for t in tokens] == enc.ids
    assert [t["piece"] for t in tokens] == enc.tokens
    assert [(t["start"], t["end"]) for t in tokens] == enc.offsets
    for t in tokens:
        assert set(t) >= {"id", "piece", "text", "bytes", "start", "end"}
        data = bytes.fromhex(t["bytes"])
        if t["piece"].startswith("##"):
            assert t["text"] == t["piece"] and data == t["piece"][2:].encode()
        elif t["piece"] != "[UNK]":
            assert data.decode() == t["text"] == t["piece"]
    assert tokens[0]["piece"] == "hello" and (tokens[0]["start"], tokens[0]["end"]) == (0, 5)


def test_tokenize_special_and_no_truncation(tmp_path):
    plain = ok_json("tokenize", "the cat", "--json", cwd=tmp_path)
    special = ok_json("tokenize", "the cat", "--json", "--special", cwd=tmp_path)
    assert [t["piece"] for t in special] == ["[CLS]", "the", "cat", "[SEP]"]
    assert [t["piece"] for t in plain] == ["the", "cat"]
    # the demo tokenizer.json enables truncation to 128 and padding: both must be off
    long = ok_json("tokenize", " ".join(["cat"] * 300), "--json", cwd=tmp_path)
    assert len(long) == 300
    assert {t["piece"] for t in long} == {"cat"}


def test_tokenize_text_output(tmp_path):
    proc = run_cli("tokenize", "the cat", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "2 tokens" in proc.stdout


def test_vector_token_cat_equals_row(tmp_path, demo):
    out = ok_json("vector", "--token", "cat", "--json", cwd=tmp_path)
    cat = Tokenizer.from_file(str(DEMO / "tokenizer.json")).token_to_id("cat")
    assert out["id"] == cat and out["dtype"] == "BF16"
    want = demo.vector(cat)
    assert len(out["values"]) == 384
    assert np.array_equal(np.array(out["values"], dtype=np.float64), want.astype(np.float64))
    # the same row by id and by #id; the entry point gives the same answer
    assert ok_json("vector", "--id", str(cat), "--json", cwd=tmp_path) == out
    assert ok_json("vector", "--token", f"#{cat}", cwd=tmp_path, entry_point=True) == out


def test_vector_files(tmp_path, demo):
    want = demo.vector(7).astype(np.float64)
    for args, name in [
        (["--format", "csv", "--out"], "row.csv"),
        (["--out"], "row.csv"),
        (["--format", "npy", "--out"], "row.bin"),
        (["--out"], "row.npy"),
        (["--out"], "row.json"),
        (["--format", "json", "--out"], "row.txt"),
    ]:
        path = tmp_path / name
        path.unlink(missing_ok=True)
        proc = run_cli("vector", "--id", "7", *args, str(path), cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr
        assert path.exists(), (args, name)
        fmt = args[1] if args[0] == "--format" else path.suffix[1:]
        if fmt == "csv":
            lines = path.read_text().splitlines()
            assert lines[0] == "index,value" and len(lines) == 385
            got = np.array([float(line.split(",")[1]) for line in lines[1:]])
            assert [int(line.split(",")[0]) for line in lines[1:]] == list(range(384))
        elif fmt == "npy":
            arr = np.load(path)
            assert arr.dtype == np.float32
            got = arr.astype(np.float64)
        else:
            got = np.array(json.loads(path.read_text())["values"])
        assert np.array_equal(got, want), (args, name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "row.bin",
        "row.csv",
        "row.json",
        "row.npy",
        "row.txt",
    ]


def test_vector_csv_to_stdout(tmp_path, demo):
    proc = run_cli("vector", "--id", "3", "--format", "csv", cwd=tmp_path)
    assert proc.returncode == 0
    values = [float(line.split(",")[1]) for line in proc.stdout.splitlines()[1:]]
    assert np.array_equal(np.array(values), demo.vector(3).astype(np.float64))


def test_tiny_models_every_path_kind(tmp_path):
    matrix = write_model(
        tmp_path / "sharded",
        rows=300,
        dim=6,
        dtype="BF16",
        sharded=True,
        tokenizer="wordpiece",
        config={"vocab_size": 300},
    )
    for path in (tmp_path / "sharded", tmp_path / "sharded" / "model.safetensors.index.json"):
        info = ok_json("info", "-m", str(path), "--json")
        assert (info["format"], info["rows"], info["dim"], info["dtype"]) == (
            "safetensors-sharded",
            300,
            6,
            "BF16",
        )
        assert len(info["files"]) == 2
        out = ok_json("vector", "-m", str(path), "--id", "299", "--json")
        assert out["values"] == matrix[299].astype(np.float32).tolist()
    single = write_model(
        tmp_path / "single", rows=12, dim=3, dtype="F8_E4M3", tensor_name="transformer.wte.weight"
    )
    info = ok_json("info", "-m", str(tmp_path / "single" / "model.safetensors"), "--json")
    assert info["tensor"] == "transformer.wte.weight" and info["dtype"] == "F8_E4M3"
    out = ok_json("vector", "-m", str(tmp_path / "single"), "--id", "11", "--json")
    assert out["values"] == single[11].astype(np.float32).tolist()
    assert out["label"] == "#11"
    info = ok_json(
        "info", "-m", str(tmp_path / "single"), "--tensor", "model.layers.0.mlp.weight", "--json"
    )
    assert (info["tensor"], info["rows"], info["dim"]) == ("model.layers.0.mlp.weight", 3, 6)


def test_no_tokenizer(tmp_path):
    matrix = write_model(tmp_path, rows=10, dim=4, dtype="F16")
    info = ok_json("info", "-m", str(tmp_path), "--json")
    assert info["tokenizer_vocab_size"] is None
    assert (
        ok_json("vector", "-m", str(tmp_path), "--id", "2", "--json")["values"]
        == matrix[2].astype(np.float32).tolist()
    )
    assert_one_line_error(run_cli("tokenize", "-m", str(tmp_path), "hello"), "no tokenizer")
    assert_one_line_error(
        run_cli("vector", "-m", str(tmp_path), "--token", "hello"), "no tokenizer"
    )
    proc = run_cli("info", "-m", str(tmp_path))
    assert "none (ids only)" in proc.stdout


def test_padding_rows_through_the_cli(tmp_path):
    write_model(tmp_path, rows=512, dim=4, tokenizer="bpe")
    info = ok_json("info", "-m", str(tmp_path), "--json")
    assert info["unused_rows"] == 512 - info["tokenizer_vocab_size"] > 0
    out = ok_json("vector", "-m", str(tmp_path), "--id", "511", "--json")
    assert "unused" in out["label"]


def test_model_files_unchanged_by_cli(tmp_path):
    write_model(tmp_path, rows=300, dim=4, tokenizer="wordpiece", config={"vocab_size": 300})
    files = sorted(tmp_path.iterdir())
    before = [(p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files]
    ok_json("info", "-m", str(tmp_path), "--json")
    ok_json("tokenize", "-m", str(tmp_path), "the cat", "--json")
    ok_json("vector", "-m", str(tmp_path), "--token", "cat", "--json")
    assert sorted(tmp_path.iterdir()) == files
    assert [
        (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in files
    ] == before


def _bad_inputs(tmp):
    """(name, argv, fragment of the message) for every kind of bad input."""
    write_model(tmp / "good", rows=10, dim=4)
    (tmp / "trunc.safetensors").write_bytes(
        safetensors_bytes({"embed_tokens.weight": ("F32", [10, 4], bytes(160))})[:100]
    )
    (tmp / "absurd.safetensors").write_bytes((2**40).to_bytes(8, "little") + b"{}" + bytes(30))
    (tmp / "notjson.safetensors").write_bytes((8).to_bytes(8, "little") + b"{oops!!}" + bytes(8))
    for name, entry in {
        "dtype": {"dtype": "F12", "shape": [2, 2], "data_offsets": [0, 16]},
        "shape": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 16]},
        "offsets": {"dtype": "F32", "shape": [2, 2], "data_offsets": [16, 32]},
    }.items():
        header = json.dumps({"embed_tokens.weight": entry}).encode()
        (tmp / f"{name}.safetensors").write_bytes(
            len(header).to_bytes(8, "little") + header + bytes(16)
        )
    write_model(tmp / "sharded", rows=8, dim=4, sharded=True)
    (tmp / "sharded" / "model-00002-of-00002.safetensors").unlink()
    write_trap_pickle(tmp / "model.ckpt", tmp / "unpickled.marker")
    (tmp / "onlypickle").mkdir()
    write_trap_pickle(tmp / "onlypickle" / "pytorch_model.bin", tmp / "unpickled.marker")
    wp = tmp / "wp"
    write_model(wp, rows=300, dim=4, tokenizer="wordpiece")
    return [
        ("missing path", ["info", "-m", str(tmp / "nope")], "nope: no such file"),
        ("truncated", ["info", "-m", str(tmp / "trunc.safetensors")], "trunc.safetensors"),
        ("absurd header", ["info", "-m", str(tmp / "absurd.safetensors")], "exceeds file size"),
        (
            "header not json",
            ["vector", "-m", str(tmp / "notjson.safetensors"), "--id", "0"],
            "JSON",
        ),
        (
            "unknown dtype",
            ["info", "-m", str(tmp / "dtype.safetensors"), "--json"],
            "unknown dtype 'F12'",
        ),
        ("shape mismatch", ["info", "-m", str(tmp / "shape.safetensors")], "needs 24 bytes"),
        ("offsets", ["info", "-m", str(tmp / "offsets.safetensors")], "offsets.safetensors"),
        ("missing shard", ["info", "-m", str(tmp / "sharded")], "is missing"),
        ("pickle file", ["info", "-m", str(tmp / "model.ckpt"), "--json"], "pickle"),
        (
            "pickle folder",
            ["vector", "-m", str(tmp / "onlypickle"), "--id", "0"],
            "pytorch_model.bin",
        ),
        ("id too big", ["vector", "-m", str(tmp / "good"), "--id", "10", "--json"], "out of range"),
        ("negative id", ["vector", "-m", str(tmp / "good"), "--id", "-1"], "out of range"),
        ("huge id", ["vector", "--token", "#99999999999999999999999"], "out of range"),
        ("id not int", ["vector", "--id", "cat"], "invalid int"),
        ("no id or token", ["vector", "--json"], "--id"),
        ("empty text", ["tokenize", "", "--json"], "empty"),
        ("empty token", ["vector", "--token", ""], "empty"),
        ("invalid utf-8 text", ["tokenize", INVALID_UTF8], "not valid UTF-8"),
        ("invalid utf-8 token", ["vector", "--token", INVALID_UTF8], "not valid UTF-8"),
        ("not one token", ["vector", "--token", "the cat", "--json"], "not a single token"),
        ("unknown tensor", ["info", "--tensor", "nope"], "nope"),
        ("unknown option", ["info", "--bogus"], "--bogus"),
        ("typo command", ["infoo", "--json"], "infoo"),
        ("npy to stdout", ["vector", "--id", "1", "--format", "npy"], "--out"),
        ("csv with --json", ["vector", "--id", "1", "--format", "csv", "--json"], "--json"),
        ("unknown suffix", ["vector", "--id", "1", "--out", str(tmp / "x.xyz")], "x.xyz"),
        (
            "unwritable out",
            ["vector", "--id", "1", "--out", str(tmp / "no" / "dir" / "x.csv")],
            "x.csv",
        ),
        ("config not json", ["info", "-m", str(tmp / "badcfg")], "config.json"),
        ("tokenizer broken", ["tokenize", "-m", str(tmp / "badtok"), "x"], "tokenizer.json"),
        ("wordpiece not one token", ["vector", "-m", str(wp), "--token", "\n"], "no tokens"),
    ]


BAD_NAMES = [
    "missing path",
    "truncated",
    "absurd header",
    "header not json",
    "unknown dtype",
    "shape mismatch",
    "offsets",
    "missing shard",
    "pickle file",
    "pickle folder",
    "id too big",
    "negative id",
    "huge id",
    "id not int",
    "no id or token",
    "empty text",
    "empty token",
    "invalid utf-8 text",
    "invalid utf-8 token",
    "not one token",
    "unknown tensor",
    "unknown option",
    "typo command",
    "npy to stdout",
    "csv with --json",
    "unknown suffix",
    "unwritable out",
    "config not json",
    "tokenizer broken",
    "wordpiece not one token",
]


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    """Every bad-input case run once, as separate processes, a few at a time (it saves time)."""
    tmp = tmp_path_factory.mktemp("bad")
    cases = {name: (argv, fragment) for name, argv, fragment in _bad_inputs(tmp)}
    write_model(tmp / "badcfg", rows=4, dim=2)
    (tmp / "badcfg" / "config.json").write_text("{oops")
    write_model(tmp / "badtok", rows=4, dim=2)
    (tmp / "badtok" / "tokenizer.json").write_text('{"model": {"type": "Nope"}}')
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(run_cli, *argv, cwd=tmp) for name, (argv, _) in cases.items()}
        results = {name: f.result() for name, f in futures.items()}
    return tmp, cases, results


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_input_is_one_line_and_exit_2(bad_inputs, name):
    tmp, cases, results = bad_inputs
    assert_one_line_error(results[name], cases[name][1])
    assert not (tmp / "unpickled.marker").exists()


def test_bad_input_list_is_complete(bad_inputs):
    assert sorted(bad_inputs[1]) == sorted(BAD_NAMES)


def test_help_and_version():
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("embedding-explorer ")
    proc = run_cli("vector", "--help")
    assert proc.returncode == 0 and "--token" in proc.stdout


def test_byte_level_tokenize_through_the_cli(tmp_path):
    write_model(tmp_path, rows=400, dim=4, tokenizer="bpe")
    text = "猫 🐱\n\tcafé"
    tokens = ok_json("tokenize", "-m", str(tmp_path), text, "--json")
    assert b"".join(bytes.fromhex(t["bytes"]) for t in tokens) == text.encode()
    for t in tokens:
        assert "\ufffd" not in t["text"] and "Ġ" not in t["text"] and "Ċ" not in t["text"]
    assert any("<0x" in t["text"] for t in tokens)


@pytest.mark.parametrize("json_flag", [True, False])
def test_non_utf8_stdout_does_not_crash(tmp_path, json_flag):
    write_model(tmp_path, rows=400, dim=4, tokenizer="bpe")
    args = ["tokenize", "-m", str(tmp_path), "cat 🐱 ␣"] + (["--json"] if json_flag else [])
    proc = run_cli(*args, env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.isascii()
    if json_flag:
        tokens = json.loads(proc.stdout)
        assert b"".join(bytes.fromhex(t["bytes"]) for t in tokens) == "cat 🐱 ␣".encode()
        assert any(t["text"].startswith("␣") for t in tokens)  # escaped on the wire, intact


def test_tokenize_file_one_json_line_per_text(tmp_path):
    texts = ["the cat sat", "", "naïve café 🐱", "hello world"]
    (tmp_path / "texts.txt").write_bytes("\r\n".join(texts).encode("utf-8"))
    proc = run_cli("tokenize", "--file", "texts.txt", "--json", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    ref = Tokenizer.from_file(str(DEMO / "tokenizer.json"))
    ref.no_truncation()
    ref.no_padding()
    assert [line["line"] for line in lines] == [1, 2, 3, 4]
    assert [line["text"] for line in lines] == texts
    for line, text in zip(lines, texts, strict=True):
        want = ref.encode(text, add_special_tokens=False).ids if text else []
        assert [t["id"] for t in line["tokens"]] == want


def test_tokenize_file_errors(tmp_path):
    assert_one_line_error(run_cli("tokenize", cwd=tmp_path), "TEXT or --file")
    assert_one_line_error(run_cli("tokenize", "x", "--file", "a.txt", cwd=tmp_path), "either")
    assert_one_line_error(run_cli("tokenize", "--file", "nope.txt", cwd=tmp_path), "nope.txt")
    (tmp_path / "bad.txt").write_bytes(b"ok\nab\xffc\n")
    assert_one_line_error(
        run_cli("tokenize", "--file", "bad.txt", cwd=tmp_path), "line 2 is not valid UTF-8"
    )
