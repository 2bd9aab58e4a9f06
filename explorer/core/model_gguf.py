"""Open a .gguf model (llama.cpp, Ollama, LM Studio): token_embd.weight, output.weight, and the
tokenizer from its `tokenizer.ggml.*` metadata."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ModelFormatError
from explorer.core.formats import gguf
from explorer.core.model import EmbeddingModel, assemble

if TYPE_CHECKING:
    from explorer.core.tokens import TokenizerInfo

EMBEDDING = "token_embd.weight"
OUTPUT = "output.weight"


def _config(meta: dict) -> dict:
    """The few config.json-like facts a GGUF file states (for `info` and the panel)."""
    arch = meta.get("general.architecture")
    out: dict = {"model_type": arch} if isinstance(arch, str) else {}
    for key in ("vocab_size", "embedding_length", "context_length"):
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, int):
            out[key] = value
    name = meta.get("general.name")
    if isinstance(name, str):
        out["name"] = name
    return out


def embedding_of(
    file: Path, tensors: dict[str, gguf.GGUFTensor], tensor: str | None
) -> gguf.GGUFTensor:
    """The embedding tensor: `tensor`, else token_embd.weight; 2-D."""
    name = tensor or EMBEDDING
    if name not in tensors:
        two_d = sorted(n for n, t in tensors.items() if len(t.shape) == 2)
        hint = f" (2-D tensors: {', '.join(two_d[:6])})" if two_d else ""
        raise ModelFormatError(f"{file.name}: has no tensor named {name!r}{hint}")
    info = tensors[name]
    if len(info.shape) != 2:
        raise ModelFormatError(
            f"{file.name}: tensor {name!r} has shape {list(info.shape)}, not [rows, dim]"
        )
    return info


def open_gguf(
    file: Path, shown: Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    files, tensors = gguf.open_parts(file)
    meta = files[0].metadata
    info = embedding_of(file, tensors, tensor)
    name = tensor or EMBEDDING
    output = OUTPUT if OUTPUT in tensors and OUTPUT != name else None
    tok: tuple[TokenizerInfo | None, list[str]] = (None, [])
    if tokenizer:
        from explorer.core.model_tokenizer import gguf_tokenizer

        tok = gguf_tokenizer(meta, info.shape[0])
    return assemble(
        path=shown,
        fmt="gguf" if len(files) == 1 else "gguf-split",
        files=[f.path for f in files],
        tensor=(name, info.type_name, (info.shape[0], info.shape[1])),
        matrix=gguf.matrix(info),
        output=(output, gguf.matrix(tensors[output]) if output else None),
        config=_config(meta),
        tokenizer=tok,
        gguf=True,
    )
