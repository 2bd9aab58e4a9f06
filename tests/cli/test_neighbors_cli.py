"""`embedding-explorer neighbors` through real subprocesses, on the demo model and tiny files."""

from __future__ import annotations

import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from explorer.core.model.open import open_model
from explorer.core.search.fast import KIND
from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
from tests.support.models import write_model
from tests.support.tokenizers import make_wordpiece_tokenizer


def run_cli(*args: str, env_cache=None) -> subprocess.CompletedProcess:
    import os

    env = dict(os.environ)
    if env_cache is not None:
        env["XDG_CACHE_HOME"] = str(env_cache)
    return subprocess.run(
        [sys.executable, "-m", "explorer", "neighbors", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env=env,
    )


@pytest.fixture
def cache_home(tmp_path):
    return tmp_path / "xdg-cache"


def test_cat_neighbors_on_the_demo_model(cache_home):
    out = run_cli("--token", "cat", "-k", "1000", "--json", env_cache=cache_home)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 1000
    assert set(rows[0]) >= {"id", "piece", "text", "score"}
    texts = [r["text"] for r in rows]
    assert "cat" not in texts  # the query itself is left out by default
    top = texts[:10]
    assert "kitten" in top and ("dog" in top or "dogs" in top)
    assert "banana" not in texts  # not even among the nearest 1000 of 30522
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert out.stderr == ""  # the demo has no zero/NaN rows to report


def test_human_readable_table_and_expression(cache_home):
    out = run_cli("--expr", "king - man + woman", "-k", "5", env_cache=cache_home)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("neighbours of king - man + woman") and "exact" in lines[0]
    assert "queen" in out.stdout
    assert len(lines) == 2 + 5


def test_include_query_metric_and_text(cache_home):
    out = run_cli(
        "--token",
        "cat",
        "-k",
        "3",
        "--include-query",
        "--metric",
        "l2",
        "--json",
        env_cache=cache_home,
    )
    rows = json.loads(out.stdout)
    assert rows[0]["text"] == "cat" and rows[0]["score"] == pytest.approx(0.0, abs=1e-6)
    out = run_cli("--text", "ice cream", "-k", "3", "--json", env_cache=cache_home)
    assert out.returncode == 0 and len(json.loads(out.stdout)) == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--expr", "king + + man"], "two operators"),
        (["--token", "cat", "-k", "0"], "k must be"),
        (["--id", "999999"], "out of range"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cache_home, args, message):
    out = run_cli(*args, env_cache=cache_home)
    assert out.returncode == 2
    assert out.stdout == ""
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_skipped_and_unused_rows_and_cached_fast_index(tmp_path, cache_home):
    vocab = make_wordpiece_tokenizer(tmp_path / "tokenizer.json").get_vocab_size()
    rows = vocab + 4  # four padding rows the tokenizer never produces
    values = np.random.default_rng(0).standard_normal((rows, 8)).astype(ml_dtypes.bfloat16)
    values[5] = 0
    values[6, 2] = np.nan
    folder = tmp_path / "m"
    write_model(folder, matrix=values, dtype="BF16", tokenizer=tmp_path / "tokenizer.json")
    model = open_model(folder)
    out = run_cli("-m", str(folder), "--id", "0", "-k", "1000", "--json", env_cache=cache_home)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert len(got) == rows - 2 - 1
    assert {5, 6}.isdisjoint(r["id"] for r in got)
    assert "2 rows" in out.stderr and "left out" in out.stderr  # on stderr, not stdout
    assert sorted(r["id"] for r in got if r.get("unused")) == list(range(vocab, rows))
    assert all(r["piece"] is None for r in got if r.get("unused"))
    # A small matrix: exact by default, and no index is built for a single query.
    out = run_cli("-m", str(folder), "--id", "0", "-k", "5", env_cache=cache_home)
    assert "exact" in out.stdout.splitlines()[0]
    assert not (cache_home / "embedding-explorer" / KIND).exists()
    # --fast builds the index first (even for a small matrix), then answers from it.
    out = run_cli(
        "-m", str(folder), "--id", "0", "-k", "5", "--fast", "--json", env_cache=cache_home
    )
    assert out.returncode == 0, out.stderr
    fast_rows = json.loads(out.stdout)  # still a list of rows
    assert (cache_home / "embedding-explorer" / KIND).exists()
    out = run_cli("-m", str(folder), "--id", "0", "-k", "5", "--fast", env_cache=cache_home)
    assert "fast index · recall@10" in out.stdout.splitlines()[0]
    searcher = NeighborSearcher(model, cache_dir=cache_home / "embedding-explorer")
    exact = searcher.search(query_for_ids(model, [0]), k=5, exact=True)
    assert [r["id"] for r in fast_rows] == exact.ids.tolist()
    # With the index cached, the default is still the cheaper exact scan of this small matrix.
    out = run_cli("-m", str(folder), "--id", "0", "-k", "5", env_cache=cache_home)
    assert "exact" in out.stdout.splitlines()[0]
    out = run_cli("-m", str(folder), "--id", "0", "-k", "5", "--exact", env_cache=cache_home)
    assert "exact" in out.stdout.splitlines()[0]


def run_index(*args: str, env_cache=None) -> subprocess.CompletedProcess:
    import os

    env = dict(os.environ, XDG_CACHE_HOME=str(env_cache))
    return subprocess.run(
        [sys.executable, "-m", "explorer", "index", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        env=env,
    )


def test_index_command_reports_measured_recall(tmp_path, cache_home):
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "data"
    out = run_index("-m", str(folder / "smollm2_rows.safetensors"), "--json", env_cache=cache_home)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert set(info["recall_at_10"]) == {"cosine", "dot"}
    assert all(r >= 0.99 for r in info["recall_at_10"].values())
    assert info["queries"] >= 200 and info["size_bytes"] > 0 and info["build_seconds"] > 0
    assert "100 %" in out.stderr  # progress on stderr, JSON alone on stdout
    again = run_index("-m", str(folder / "smollm2_rows.safetensors"), env_cache=cache_home)
    assert again.returncode == 0 and "recall@10" in again.stdout
    assert "cosine" in again.stdout and "dot" in again.stdout
    bad = run_index("-m", str(tmp_path / "missing"), env_cache=cache_home)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
