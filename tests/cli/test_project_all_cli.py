"""`embedding-explorer project --all`: every row on one map, as coordinates, cached per file."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from explorer.cli import main
from explorer.core.model.open import open_model
from tests.support.models import planted_model

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"


def run(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "explorer", "project", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        env=env,
    )


def test_every_row_as_csv_then_npy_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    common = ["-m", str(SLICE), "--all", "--n-neighbors", "8", "--n-epochs", "20"]
    first = run(cache, *common, "--out", str(tmp_path / "map.csv"))
    assert first.returncode == 0, first.stderr
    assert "first picture (PCA) of 2,048 rows" in first.stderr
    assert "UMAP epoch 20/20" in first.stderr  # progress on stderr
    rows = list(csv.DictReader((tmp_path / "map.csv").read_text(encoding="utf-8").splitlines()))
    assert list(rows[0]) == ["id", "piece", "x", "y"]
    assert [int(r["id"]) for r in rows] == list(range(2048))
    assert all(np.isfinite(float(r["x"])) and np.isfinite(float(r["y"])) for r in rows)

    again = run(cache, *common, "--out", str(tmp_path / "map.npy"))
    assert again.returncode == 0, again.stderr
    assert "cached layout" in again.stderr and "first picture" not in again.stderr
    coords = np.load(tmp_path / "map.npy")
    assert coords.shape == (2048, 2) and coords.dtype == np.float32
    csv_coords = np.array([[float(r["x"]), float(r["y"])] for r in rows])
    assert np.allclose(coords, csv_coords, rtol=1e-5, atol=1e-5)


def test_plain_leaves_out_rows_beyond_the_tokenizer_and_special_tokens(tmp_path, capsys):
    folder, _, _ = planted_model(tmp_path / "m")
    out = tmp_path / "plain.csv"
    args = ["project", "-m", str(folder), "--all", "--method", "pca", "--plain", "--out", str(out)]
    assert main(args) == 0
    model = open_model(folder)
    try:
        special = model.tokenizer.special_ids
        used = np.flatnonzero(model.used_rows)
    finally:
        model.close()
    ids = [int(r["id"]) for r in csv.DictReader(out.read_text(encoding="utf-8").splitlines())]
    assert ids == [int(i) for i in used if int(i) not in special]


def test_npy_needs_all(tmp_path, capsys):
    code = main(["project", "--sample", "20", "--out", str(tmp_path / "x.npy")])
    assert code == 2
    err = capsys.readouterr().err
    assert "x.npy: unknown output type" in err and len(err.strip().splitlines()) == 1
