"""Models already on the computer: Hugging Face cache, Ollama and LM Studio, built in a temporary
HOME; listed from headers, and opened by repo id or Ollama name."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.model.open import open_model
from explorer.core.model.stores import list_models, resolve
from tests.support.models import decoded
from tests.support.stores import make_hf_cache, make_lmstudio, make_ollama


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(var, raising=False)
    return home


def test_lists_every_store(home):
    make_hf_cache(home / ".cache" / "huggingface" / "hub")
    make_ollama(home / ".ollama" / "models")
    make_lmstudio(home / ".lmstudio" / "models")
    found = {m.name: m for m in list_models()}
    assert set(found) == {"acme/tiny-lm", "tiny:1b", "pub/Tiny-GGUF/tiny-Q4_0.gguf"}
    hf, ol, lm = found["acme/tiny-lm"], found["tiny:1b"], found["pub/Tiny-GGUF/tiny-Q4_0.gguf"]
    assert (hf.store, hf.format, hf.rows, hf.dim, hf.dtype) == (
        "huggingface",
        "safetensors",
        40,
        8,
        "BF16",
    )
    assert (ol.store, ol.format, ol.rows, ol.dim, ol.dtype) == ("ollama", "gguf", 30, 64, "Q8_0")
    assert (lm.store, lm.rows, lm.dim, lm.dtype) == ("lmstudio", 20, 32, "Q4_0")
    assert hf.size == sum(f.stat().st_size for f in hf.path.glob("*.safetensors"))
    assert ol.size == ol.path.stat().st_size and not hf.problem


def test_hf_home_and_hub_cache_variables(home, tmp_path, monkeypatch):
    make_hf_cache(tmp_path / "elsewhere" / "hub", repo="a/b")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    assert [m.name for m in list_models()] == ["a/b"]
    make_hf_cache(tmp_path / "cache2", repo="c/d")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache2"))
    assert [m.name for m in list_models()] == ["c/d"]


def test_open_by_repo_id_and_ollama_name(home):
    matrix = make_hf_cache(home / ".cache" / "huggingface" / "hub")
    raw = make_ollama(home / ".ollama" / "models", tag="latest")
    model = open_model("acme/tiny-lm")
    assert model.path.name == "0123abcd" and model.rows == 40
    np.testing.assert_array_equal(model.vectors([3]), matrix[[3]].astype(np.float32))
    for name in ("tiny:latest", "tiny"):
        model = open_model(name)
        assert model.format == "gguf" and model.dtype == "Q8_0"
        np.testing.assert_array_equal(model.vectors([2]), decoded(raw, "Q8_0")[[2]])
    assert resolve("nobody/nothing") is None and resolve("none:1b") is None


def test_unreadable_model_is_listed_with_its_problem(home):
    root = home / ".lmstudio" / "models" / "pub" / "Broken"
    root.mkdir(parents=True)
    (root / "broken.gguf").write_bytes(b"GGUF" + bytes(8))
    [m] = list_models()
    assert m.problem and "broken.gguf" in m.problem
