"""Models already on this computer: the Hugging Face cache, Ollama and LM Studio.

Listing reads headers only (safetensors JSON header, GGUF header without its vocabulary), so it
costs milliseconds per model. `resolve` turns `org/name` or `llama3.2:1b` into a path, offline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from explorer.core.errors import ExplorerError, ModelFormatError
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_MANIFEST_BYTES
from explorer.core.model.formats.jsonfile import load_json

WEIGHT_SUFFIXES = (".safetensors", ".gguf")
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_DEFAULT_REGISTRY = "registry.ollama.ai"


@dataclass(frozen=True)
class StoredModel:
    name: str  # what -m accepts: org/name, llama3.2:1b, or the path
    store: str  # "huggingface", "ollama", "lmstudio"
    path: Path
    format: str = ""
    tensor: str = ""
    rows: int = 0
    dim: int = 0
    dtype: str = ""
    size: int = 0  # bytes of weight files
    problem: str = ""  # why the header could not be read, if it could not

    def as_dict(self) -> dict:
        return {**self.__dict__, "path": str(self.path)}


# -- where each store lives ---------------------------------------------------------------------
def hf_cache_dir() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def ollama_dir() -> Path:
    env = os.environ.get("OLLAMA_MODELS")
    return Path(env).expanduser() if env else Path.home() / ".ollama" / "models"


def lmstudio_dirs() -> list[Path]:
    home = Path.home()
    return [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]


# -- Hugging Face cache ---------------------------------------------------------------------------
def _hf_snapshot(repo_dir: Path) -> Path | None:
    """The snapshot refs/main points at, else the newest one."""
    snaps = repo_dir / "snapshots"
    ref = repo_dir / "refs" / "main"
    try:
        if ref.is_file():
            name = read_limited(ref, MAX_MANIFEST_BYTES).decode("utf-8", "replace").strip()
            chosen = snaps / name
            if name and "/" not in name and chosen.is_dir():
                return chosen
    except (OSError, ModelFormatError):
        pass  # an unreadable ref: the newest snapshot, as without one
    try:
        entries = list(snaps.iterdir()) if snaps.is_dir() else []
    except OSError:
        return None
    dated = []
    for p in entries:
        try:
            dated.append((p.stat().st_mtime, p.name, p))
        except OSError:  # a dangling link: not a snapshot to open
            continue
    return max(dated)[2] if dated else None


def _hf_repos() -> Iterator[tuple[str, Path]]:
    root = hf_cache_dir()
    try:
        entries = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith("models--"):
            continue
        snapshot = _hf_snapshot(entry)
        if snapshot is not None and _has_weights(snapshot):
            yield entry.name[len("models--") :].replace("--", "/"), snapshot


def _has_weights(folder: Path) -> bool:
    try:
        return any(p.name.endswith(WEIGHT_SUFFIXES) for p in folder.iterdir())
    except OSError:
        return False


# -- Ollama ---------------------------------------------------------------------------------------
def _ollama_models() -> Iterator[tuple[str, Path, str]]:
    """(name, model blob, "") per manifest; (name, manifest, why) when it names no usable blob."""
    root = ollama_dir()
    manifests = root / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(p for p in manifests.rglob("*") if not p.is_dir()):
        parts = manifest.relative_to(manifests).parts  # registry, namespace, model, tag
        if len(parts) != 4:
            continue
        registry, namespace, model, tag = parts
        name = f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
        if registry != OLLAMA_DEFAULT_REGISTRY:
            name = f"{registry}/{name}"
        try:
            yield name, _ollama_blob(root, manifest), ""
        except ModelFormatError as e:
            yield name, manifest, str(e)


def _ollama_blob(root: Path, manifest: Path) -> Path:
    data = load_json(manifest, "not a manifest", MAX_MANIFEST_BYTES)
    layers = data.get("layers") if isinstance(data, dict) else None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
            digest = str(layer.get("digest", ""))
            blob = root / "blobs" / digest.replace(":", "-")
            if "/" not in digest and blob.is_file():
                return blob
            state = "is not a regular file" if blob.exists() else "is missing"
            raise ModelFormatError(f"{manifest.name}: model blob {digest} {state}")
    raise ModelFormatError(f"{manifest.name}: the manifest names no model layer")


# -- LM Studio ------------------------------------------------------------------------------------
def _lmstudio_models() -> Iterator[tuple[str, Path]]:
    for root in lmstudio_dirs():
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.gguf")):
            if "mmproj" in path.name.lower():  # vision projectors, not language models
                continue
            yield str(path.relative_to(root)), path


# -- headers --------------------------------------------------------------------------------------
def describe(name: str, store: str, path: Path) -> StoredModel:
    """Name, format, embedding shape and dtype from headers only."""
    from explorer.core.model.store_headers import header_facts

    try:
        facts = header_facts(path)
    except (ExplorerError, OSError) as e:
        return StoredModel(name, store, path, problem=str(e))
    return StoredModel(name, store, path, **facts)


def list_models() -> list[StoredModel]:
    found = [describe(n, "huggingface", p) for n, p in _hf_repos()]
    found += [
        StoredModel(n, "ollama", p, problem=why) if why else describe(n, "ollama", p)
        for n, p, why in _ollama_models()
    ]
    found += [describe(n, "lmstudio", p) for n, p in _lmstudio_models()]
    return found


def resolve(ref: str) -> Path | None:
    """`org/name` (Hugging Face cache) or `model:tag` / `model` (Ollama) → a local path."""
    if not ref or ref.startswith(("/", ".", "~")):
        return None
    wanted = ref if ":" in ref.rsplit("/", 1)[-1] else f"{ref}:latest"
    for name, blob, why in _ollama_models():
        if name == wanted:
            if why:
                raise ModelFormatError(f"{name}: {why}")
            return blob
    if ref.count("/") == 1:
        for name, snapshot in _hf_repos():
            if name == ref:
                return snapshot
    return None
