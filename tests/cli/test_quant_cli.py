"""`quant` as a process: JSON shape for simulated types and for two files, refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.cli.test_cli_basic import assert_one_line_error, ok_json, run_cli
from tests.support.models import stored, write_gguf
from tests.support.tokenizers import byte_level_bpe, gguf_tokenizer_keys

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
SUMMARY_KEYS = {"type", "rows", "relative_error", "cosine", "top10_overlap", "worst"}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    keys = gguf_tokenizer_keys(byte_level_bpe(True), "smollm")
    values = load_file(str(SLICE))["token_embd.weight"][: len(keys["tokens"])].astype(np.float32)
    folder = tmp_path_factory.mktemp("quant_cli")
    swapped = dict(keys, tokens=[keys["tokens"][1], keys["tokens"][0], *keys["tokens"][2:]])
    out = {}
    for name, type_name, tokens in [
        ("bf16", "BF16", keys),
        ("q4_0", "Q4_0", keys),
        ("swapped", "Q8_0", swapped),
    ]:
        path = folder / f"{name}.gguf"
        write_gguf(
            path, {"token_embd.weight": (stored(values, type_name), type_name)}, tokenizer=tokens
        )
        out[name] = str(path)
    return out


def _check_summary(obj: dict, type_name: str, rows: int, sample: int) -> None:
    assert SUMMARY_KEYS <= set(obj)
    assert obj["type"] == type_name and obj["rows"] == rows
    assert set(obj["relative_error"]) == {"median", "p99", "max"}
    assert set(obj["cosine"]) == {"median", "min"}
    assert obj["top10_overlap"]["sample"] == sample
    assert 0 <= obj["top10_overlap"]["mean"] <= 1
    assert obj["top10_overlap"]["method"] == "exact"  # a small matrix: every row scanned
    assert 0 < obj["relative_error"]["median"] <= obj["relative_error"]["p99"]
    assert len(obj["worst"]) == 20
    dims = obj["dimensions"]
    assert len(dims) == 5 and dims[0]["rms_error"] >= dims[-1]["rms_error"] > 0
    assert set(obj["worst"][0]) == {"id", "piece", "relative_error"}
    errors = [w["relative_error"] for w in obj["worst"]]
    assert errors == sorted(errors, reverse=True) and errors[0] == obj["relative_error"]["max"]


def test_simulate_several_types_prints_a_list(models):
    out = ok_json(
        "quant", "-m", models["bf16"], "--simulate", "q8_0,Q4_0", "--sample", "50", "--json"
    )
    assert isinstance(out, list) and [o["type"] for o in out] == ["Q8_0", "Q4_0"]
    for obj in out:
        _check_summary(obj, obj["type"], 508, 50)
    assert out[0]["relative_error"]["median"] < out[1]["relative_error"]["median"]


def test_two_files_print_one_object_and_a_table(models):
    out = ok_json("quant", "-m", models["bf16"], "-m", models["q4_0"], "--sample", "40", "--json")
    _check_summary(out, "Q4_0", 508, 40)
    proc = run_cli("quant", "-m", models["bf16"], "-m", models["q4_0"], "--sample", "40")
    assert proc.returncode == 0, proc.stderr
    assert "Q4_0: the 20 most damaged tokens" in proc.stdout
    assert proc.stdout.splitlines()[2].split()[0] == "Q4_0"


def test_misaligned_files_and_unknown_types_are_one_line(models):
    proc = run_cli("quant", "-m", models["bf16"], "-m", models["swapped"], "--json")
    assert "row 0 is" in assert_one_line_error(proc)
    proc = run_cli("quant", "-m", models["bf16"], "--simulate", "Q6_K")
    assert "cannot simulate 'Q6_K'" in assert_one_line_error(proc)
    proc = run_cli("quant", "-m", models["bf16"])
    assert "two files" in assert_one_line_error(proc)
