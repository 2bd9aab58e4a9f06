"""Issue 11, property: every CLI command on random arguments and random malformed models either
succeeds (exit 0) or exits 2 with exactly one line on stderr. In-process for speed."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main
from tests.support.models import write_model

FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PREFIX = "embedding-explorer: error: "

WEIRD = st.sampled_from(
    [
        "",
        " ",
        "-1",
        "0",
        "1",
        "7",
        "10",
        "1e3",
        "nan",
        "inf",
        "-inf",
        "1_0",
        "١٢",
        "²",
        "#²",
        "#١٢",
        "#3",
        "#" + "9" * 30,
        "9" * 5000,
        "cat",
        "the cat",
        "ж",
        "🐱" * 300,
        "a\nb",
        "king - man + woman",
        "- -",
        "'",
        '"x',
        "x" * 100_001,
        "ab\udcffc",
        "[UNK]",
        "##s",
    ]
)
VALUES = st.one_of(WEIRD, st.text(max_size=12), st.integers(-(2**70), 2**70).map(str))
OPTIONS = {
    "info": ["--json", "--tensor"],
    "tokenize": ["--json", "--special"],
    "vector": ["--id", "--token", "--format", "--json"],
    "neighbors": [
        "--id",
        "--token",
        "--text",
        "--expr",
        "-k",
        "--metric",
        "--exact",
        "--include-query",
        "--json",
    ],
    "project": [
        "--around",
        "--text",
        "--ids",
        "--sample",
        "-n",
        "--seed",
        "--n-neighbors",
        "--min-dist",
        "--n-epochs",
        "--title",
        "--size",
        "--json",
    ],
}


def run(capsys, argv: list[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    lines = err.splitlines()
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith(PREFIX), (argv, err)
        assert len(lines[0]) < 400
    else:
        assert all(line.startswith("note:") for line in lines), (argv, err)
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fuzz")
    write_model(root / "wp", rows=300, dim=8, tokenizer="wordpiece")
    write_model(root / "bpe", rows=400, dim=8, dtype="BF16", tokenizer="bpe")
    bad = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
    bad[::7] = np.nan
    bad[1::7] = 0
    bad[2::7] = 3e38
    write_model(root / "odd", matrix=bad, tokenizer="wordpiece")
    return {k: str(root / k) for k in ("wp", "bpe", "odd")}


@st.composite
def arguments(draw, command: str) -> list[str]:
    argv: list[str] = []
    for option in draw(st.lists(st.sampled_from(OPTIONS[command]), max_size=4)):
        argv.append(option)
        if option not in ("--json", "--special", "--exact", "--include-query"):
            argv.append(draw(VALUES))
    if command == "tokenize":
        argv.append(draw(VALUES))
    return argv


@pytest.mark.parametrize("command", sorted(OPTIONS))
@FUZZ
@given(data=st.data())
def test_cli_arguments_fuzz(capsys, models, tmp_path, command, data):
    model = models[data.draw(st.sampled_from(sorted(models)))]
    argv = [command, "-m", model, *data.draw(arguments(command))]
    if command == "project":  # figure files into tmp_path; PCA keeps the run short
        argv += [
            "--method",
            "pca",
            "--out",
            str(tmp_path / data.draw(st.sampled_from(["x.csv", "x.json", "x.svg", "x.txt"]))),
        ]
    run(capsys, argv)


@st.composite
def broken_models(draw, root: Path) -> Path:
    """A small real model, then one thing broken: header bytes, config, tokenizer, a truncation."""
    folder = root / f"m{draw(st.integers(0, 10**9))}"
    write_model(folder, rows=40, dim=4, tokenizer="wordpiece", config={"vocab_size": 40})
    kind = draw(st.sampled_from(["flip", "truncate", "config", "tokenizer", "header_len"]))
    target = folder / "model.safetensors"
    data = bytearray(target.read_bytes())
    if kind == "flip":
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        target.write_bytes(bytes(data))
    elif kind == "truncate":
        target.write_bytes(bytes(data[: draw(st.integers(0, len(data) - 1))]))
    elif kind == "header_len":
        (n,) = struct.unpack("<Q", data[:8])
        target.write_bytes(struct.pack("<Q", max(0, n + draw(st.integers(-9, 9)))) + data[8:])
    elif kind == "config":
        value = draw(
            st.sampled_from(
                [
                    "[" * 50_000,
                    '{"vocab_size": 1' + "0" * 5000 + "}",
                    '{"vocab_size": -1}',
                    '{"text_config": 3}',
                    "\xff",
                ]
            )
        )
        (folder / "config.json").write_bytes(
            value.encode("utf-8", "surrogateescape") if value != "\xff" else b"\xff"
        )
    else:
        spec = json.loads((folder / "tokenizer.json").read_text())
        spec["model"][draw(st.sampled_from(sorted(spec["model"])))] = draw(
            st.sampled_from([None, 3, "x", [], {"a": 2**40}])
        )
        (folder / "tokenizer.json").write_text(json.dumps(spec))
    return folder


@FUZZ
@given(data=st.data())
def test_cli_on_broken_models(capsys, tmp_path, data):
    folder = data.draw(broken_models(tmp_path))
    argv = data.draw(
        st.sampled_from(
            [
                ["info", "--json"],
                ["tokenize", "the cat"],
                ["vector", "--id", "3"],
                ["vector", "--token", "cat"],
                ["neighbors", "--id", "1", "--exact"],
                ["neighbors", "--text", "the cat"],
                ["project", "--sample", "10", "--method", "pca", "--json"],
            ]
        )
    )
    run(capsys, [argv[0], "-m", str(folder), *argv[1:]])
