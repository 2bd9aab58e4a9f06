"""`stats`, `compare-head` and `compare` through real subprocesses on real model files."""

from __future__ import annotations

import csv
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from explorer.core.compare.neighbors import align_vocabularies
from explorer.core.model.open import open_model
from tests.support.models import OUTLIER_DIM, PAD, ZERO, planted_model


def run_cli(*args: str, cache=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=180,
        env=env,
    )


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    folder, e, u = planted_model(tmp_path_factory.mktemp("untied") / "m", "BF16", tied=False)
    return folder, e, u


def test_stats_json_csv_png(untied, tmp_path):
    folder, e, _ = untied
    out = run_cli("stats", "-m", str(folder), "--json", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert set(d) == {"rows", "dim", "norms", "dimensions", "suspicious", "kinds"}
    assert set(d["norms"]) == {"min", "max", "mean", "median", "histogram"}
    assert set(d["dimensions"]) == {"mean", "std", "outliers"}
    norms = np.linalg.norm(e.astype(np.float64), axis=1)
    assert d["rows"] == len(e) and d["norms"]["max"] == pytest.approx(norms.max())
    np.testing.assert_allclose(d["dimensions"]["std"], e.astype(np.float64).std(axis=0), rtol=1e-6)
    assert d["dimensions"]["outliers"] == [OUTLIER_DIM]
    assert {"id": ZERO, "reason": "zero"} in [
        {"id": s["id"], "reason": s["reason"]} for s in d["suspicious"]
    ]
    assert d["kinds"]["unused"] == PAD

    table = tmp_path / "t.csv"
    assert run_cli("stats", "-m", str(folder), "--out", str(table), cache=tmp_path).returncode == 0
    rows = list(csv.DictReader(table.read_text(encoding="utf-8").splitlines()))
    assert len(rows) == len(e) and rows[ZERO]["suspicious"] == "zero"
    assert float(rows[5]["norm"]) == pytest.approx(norms[5])
    dims = tmp_path / "d.csv"
    run_cli("stats", "-m", str(folder), "--out", str(dims), "--table", "dimensions", cache=tmp_path)
    outliers = [r for r in csv.DictReader(dims.read_text().splitlines()) if r["outlier"] == "1"]
    assert outliers[0]["dimension"] == str(OUTLIER_DIM)

    png = tmp_path / "s.png"
    out = run_cli("stats", "-m", str(folder), "--out", str(png), cache=tmp_path)
    assert out.returncode == 0, out.stderr
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1920, 1080)


def test_stats_bad_output_type_is_one_line(untied, tmp_path):
    out = run_cli("stats", "-m", str(untied[0]), "--out", str(tmp_path / "x.txt"))
    assert (
        out.returncode == 2 and out.stderr.count("\n") == 1 and "unknown output type" in out.stderr
    )


def test_compare_head(untied, tmp_path):
    folder, e, u = untied
    out = run_cli("compare-head", "-m", str(folder), "--json", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert set(d) == {"tied", "shown_as_tied", "head", "cosine", "extremes"}
    assert d["tied"] is False and d["head"].startswith("untied")
    e64, u64 = e.astype(np.float64), u.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (e64 * u64).sum(1) / (np.linalg.norm(e64, axis=1) * np.linalg.norm(u64, axis=1))
    assert d["cosine"]["mean"] == pytest.approx(np.nanmean(cos))
    out = run_cli(
        "compare-head", "-m", str(folder), "--id", "265", "-k", "4", "--json", cache=tmp_path
    )
    d = json.loads(out.stdout)
    assert {"neighbors_input", "neighbors_output", "overlap", "direct_path"} <= set(d)
    assert [r["id"] for r in d["direct_path"]] == np.argsort(-(u64 @ e64[265]), kind="stable")[
        :4
    ].tolist()
    tied = run_cli("compare-head", "--token", "cat", "-k", "3", "--json", cache=tmp_path)
    t = json.loads(tied.stdout)
    assert t["shown_as_tied"] is True and t["cosine"] is None
    assert t["direct_path"][0]["text"] == "cat"
    # the demo (an encoder) has no head: one answer, in the same words as `info`
    info = json.loads(run_cli("info", "--json", cache=tmp_path).stdout)
    assert t["tied"] is info["tied"] is None and t["head"] == info["head"]
    text = run_cli("compare-head", cache=tmp_path).stdout
    assert info["head"] in text and "shown as if tied" in text and "is tied" not in text
    bad = run_cli("compare-head", "-m", str(folder), "--id", "999999")
    assert bad.returncode == 2 and "out of range" in bad.stderr


def test_compare(untied, tmp_path):
    folder, _, _ = untied
    other, _, _ = planted_model(tmp_path / "other", "F32", tied=True, seed=9)
    out = run_cli(
        "compare", "-m", str(folder), "-m", str(other), "--token", " cat", "-k", "5", "--json"
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert set(d) == {"a", "b", "overlap", "jaccard", "shared_vocab"}
    assert len(d["a"]) == len(d["b"]) == 5
    align = align_vocabularies(open_model(folder), open_model(other))
    assert d["shared_vocab"] == align.shared
    mapped = {align.to_b(r["id"]) for r in d["a"]}
    assert d["overlap"] == len(mapped & {r["id"] for r in d["b"]})
    by_id = run_cli(
        "compare", "-m", str(folder), "-m", str(other), "--id", str(d["a"][0]["id"]), "--json"
    )
    assert json.loads(by_id.stdout)["shared_vocab"] == d["shared_vocab"]
    text = run_cli("compare", "-m", str(folder), "-m", str(other), "--token", " cat", "-k", "3")
    assert text.returncode == 0 and "overlap" in text.stdout and "jaccard" in text.stdout
    one = run_cli("compare", "-m", str(folder), "--id", "3")
    assert one.returncode == 2 and "exactly two models" in one.stderr
