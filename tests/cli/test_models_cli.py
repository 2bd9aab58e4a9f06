"""`models` lists fixture stores built in a temporary HOME; `-m NAME` opens them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.stores import make_hf_cache, make_lmstudio, make_ollama


def _run(home, *args):
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS")
    }
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_models_json_and_text(tmp_path):
    make_hf_cache(tmp_path / ".cache" / "huggingface" / "hub")
    make_ollama(tmp_path / ".ollama" / "models")
    make_lmstudio(tmp_path / ".cache" / "lm-studio" / "models")
    proc = _run(tmp_path, "models", "--json")
    assert proc.returncode == 0 and proc.stderr == ""
    listed = {m["name"]: m for m in json.loads(proc.stdout)}
    assert set(listed) == {"acme/tiny-lm", "tiny:1b", "pub/Tiny-GGUF/tiny-Q4_0.gguf"}
    assert listed["tiny:1b"]["dtype"] == "Q8_0" and listed["tiny:1b"]["rows"] == 30
    text = _run(tmp_path, "models")
    assert "acme/tiny-lm" in text.stdout and "40 × 8" in text.stdout
    info = _run(tmp_path, "info", "-m", "tiny:1b", "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["dtype"] == "Q8_0"


def test_no_models(tmp_path):
    proc = _run(tmp_path, "models")
    assert proc.returncode == 0 and "no models found" in proc.stdout
