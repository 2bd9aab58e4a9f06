"""Model stores on disk as their tools leave them: a Hugging Face cache, Ollama, LM Studio."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from tests.support.models import random_matrix, stored, write_gguf, write_model


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
    raw = stored(random_matrix(rows, dim), "Q8_0")
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
    raw = stored(random_matrix(rows, dim), "Q4_0")
    write_gguf(folder / "tiny-Q4_0.gguf", {"token_embd.weight": (raw, "Q4_0")})
    write_gguf(
        folder / "mmproj-tiny.gguf", {"v.patch.weight": (np.ones((4, 4), np.float32), "F32")}
    )
    return raw
