"""Open a .gguf model (llama.cpp, Ollama, LM Studio): token_embd.weight, output.weight, and the
tokenizer from its `tokenizer.ggml.*` metadata."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ModelFormatError
from explorer.core.model.decode import decodable, decodable_names
from explorer.core.model.embedding import EmbeddingModel, assemble
from explorer.core.model.formats import gguf
from explorer.core.model.tensors import GGUF_EMBEDDING, GGUF_OUTPUT, gguf_embedding

if TYPE_CHECKING:
    from explorer.core.tokenizer.tokens import TokenizerInfo


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


def open_gguf(
    file: Path, shown: Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    files, tensors = gguf.open_parts(file)
    meta = files[0].metadata
    info = gguf_embedding(file, tensors, tensor)
    name = tensor or GGUF_EMBEDDING
    output = GGUF_OUTPUT if GGUF_OUTPUT in tensors and GGUF_OUTPUT != name else None
    for t in (info, tensors[output] if output else None):
        if t is not None and t.ggml_type not in gguf.FLOAT_TYPES and not decodable(t.ggml_type):
            raise ModelFormatError(
                f"{file.name}: tensor {t.name!r} is stored as {t.type_name}, which cannot be "
                f"decoded here (supported: {', '.join(decodable_names())})"
            )
    tok: tuple[TokenizerInfo | None, list[str]] = (None, [])
    if tokenizer:
        from explorer.core.model.tokenizer import gguf_tokenizer

        tok = gguf_tokenizer(meta, info.shape[0], file)
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
