"""Embedding name, shape, dtype and size of a model from its headers alone (for model lists)."""

from __future__ import annotations

from pathlib import Path

from explorer.core.errors import ModelFormatError
from explorer.core.filecheck import check_regular, open_regular
from explorer.core.model.formats import gguf
from explorer.core.model.formats.jsonfile import load_json
from explorer.core.model.formats.safetensors import SafetensorsFile
from explorer.core.model.open_gguf import nested_too_deeply
from explorer.core.model.tensors import find_embedding


def _gguf_facts(path: Path) -> tuple[dict, str, int]:
    parts = gguf.split_parts(path)
    tensors: dict[str, gguf.GGUFTensor] = {}
    for part in parts:
        check_regular(part)  # a FIFO would block the open below
        try:
            tensors.update(gguf.GGUFFile.open(part, arrays=False).tensors)
        except RecursionError:  # arrays of arrays of …: the parser recurses once per level
            raise ModelFormatError(nested_too_deeply(part)) from None
    emb = tensors.get("token_embd.weight")
    if emb is None or len(emb.shape) != 2:
        raise ModelFormatError(f"{path.name}: no token_embd.weight")
    fmt = "gguf" if len(parts) == 1 else "gguf-split"
    size = sum(p.stat().st_size for p in parts)
    rows, dim = emb.shape
    return {"format": fmt, "tensor": emb.name, "rows": rows, "dim": dim}, emb.type_name, size


def _safetensors_facts(folder: Path, files: list[Path]) -> tuple[dict, str, int]:
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, str] = {}
    for f in files:
        h = SafetensorsFile(check_regular(f))
        try:
            for name, info in h.tensors.items():
                shapes[name], dtypes[name] = tuple(info.shape), info.dtype
        finally:
            h.close()
    config = {}
    cfg = folder / "config.json"
    if cfg.is_file():
        try:
            loaded = load_json(cfg, "not valid JSON")
            config = loaded if isinstance(loaded, dict) else {}
        except ModelFormatError:
            config = {}
    name = find_embedding(folder, shapes, config, None)
    fmt = "safetensors" if len(files) == 1 else "safetensors-sharded"
    rows, dim = shapes[name][:2] if len(shapes[name]) == 2 else (0, 0)
    size = sum(f.stat().st_size for f in files)
    return {"format": fmt, "tensor": name, "rows": rows, "dim": dim}, dtypes[name], size


def header_facts(path: Path) -> dict:
    """format, tensor, rows, dim, dtype and size (bytes) of a model file or folder."""
    if not path.is_dir():
        check_regular(path)
    if path.is_file() and (path.suffix.lower() == ".gguf" or _is_gguf(path)):
        facts, dtype, size = _gguf_facts(path)
    elif path.is_dir():
        weights = sorted(path.glob("*.safetensors"))
        ggufs = sorted(path.glob("*.gguf"))
        if weights:
            facts, dtype, size = _safetensors_facts(path, weights)
        elif ggufs:
            facts, dtype, size = _gguf_facts(ggufs[0])
        else:
            raise ModelFormatError(f"{path.name}: holds no .safetensors or .gguf file")
    else:
        raise ModelFormatError(f"{path.name}: not a model file")
    return {**facts, "dtype": dtype, "size": size}


def _is_gguf(path: Path) -> bool:
    """Ollama blobs have no suffix: look at the magic."""
    try:
        with open_regular(path) as f:
            return f.read(4) == b"GGUF"
    except (OSError, ModelFormatError):
        return False
