"""Models already on the computer: Hugging Face cache, Ollama and LM Studio, built in a temporary
HOME; listed from headers, and opened by repo id or Ollama name."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
from core.fixtures import write_model
from core.gguf_fixtures import decoded, random_values, stored, write_gguf

from explorer.core.model.open import open_model
from explorer.core.model.stores import list_models, resolve


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(var, raising=False)
    return home


def make_hf_cache(root, repo="acme/tiny-lm", rows=40, dim=8):
    """models--acme--tiny-lm with blobs, a snapshot of symlinks, and refs/main."""
    repo_dir = root / f"models--{repo.replace('/', '--')}"
    staging = root / "staging"
    matrix = write_model(staging, rows=rows, dim=dim, dtype="BF16", config={"vocab_size": rows})
    snap = repo_dir / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (repo_dir / "blobs").mkdir()
    for f in staging.iterdir():
        blob = repo_dir / "blobs" / hashlib.sha256(f.read_bytes()).hexdigest()
        f.rename(blob)
        (snap / f.name).symlink_to(os.path.relpath(blob, snap))
    staging.rmdir()
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / "main").write_text("0123abcd")
    return matrix


def make_ollama(root, model="tiny", tag="1b", rows=30, dim=64):
    raw = stored(random_values(rows, dim), "Q8_0")
    root.mkdir(parents=True, exist_ok=True)
    tmp = write_gguf(root / "tmp.gguf", {"token_embd.weight": (raw, "Q8_0")})
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    tmp.rename(root / "blobs" / f"sha256-{digest}")
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / model / tag
    manifest.parent.mkdir(parents=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256-none"},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return raw


def make_lmstudio(root, rows=20, dim=32):
    folder = root / "pub" / "Tiny-GGUF"
    folder.mkdir(parents=True)
    raw = stored(random_values(rows, dim), "Q4_0")
    write_gguf(folder / "tiny-Q4_0.gguf", {"token_embd.weight": (raw, "Q4_0")})
    write_gguf(
        folder / "mmproj-tiny.gguf", {"v.patch.weight": (np.ones((4, 4), np.float32), "F32")}
    )
    return raw


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
