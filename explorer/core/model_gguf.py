"""Open a .gguf model (llama.cpp, Ollama, LM Studio): token_embd.weight, output.weight, and the
tokenizer from its `tokenizer.ggml.*` metadata."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ModelFormatError
from explorer.core.formats import gguf
from explorer.core.model import EmbeddingModel, head_evidence

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


def open_gguf(
    file: Path, shown: Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    files, tensors = gguf.open_parts(file)
    meta = files[0].metadata
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
    matrix = gguf.matrix(info)
    output = OUTPUT if OUTPUT in tensors and OUTPUT != name else None
    head_matrix = gguf.matrix(tensors[output]) if output else None
    evidence = head_evidence(name, matrix, output, head_matrix, {}, gguf=True)
    tok: TokenizerInfo | None = None
    warnings: list[str] = []
    if tokenizer:
        from explorer.core.tokenizer_sources import from_gguf
        from explorer.core.tokens import TokenizerInfo, _spec_of

        built = from_gguf(meta)
        if built is not None:
            spec = _spec_of(built.tokenizer)
            tok = TokenizerInfo(built.tokenizer, spec, rows=info.shape[0], source=built.source)
            warnings = built.warnings
    return EmbeddingModel(
        path=shown,
        format="gguf" if len(files) == 1 else "gguf-split",
        files=[f.path for f in files],
        tensor=name,
        dtype=info.type_name,
        rows=info.shape[0],
        dim=info.shape[1],
        matrix=matrix,
        output_tensor=output,
        tied=evidence.tied,
        tokenizer=tok,
        config=_config(meta),
        head=evidence,
        tokenizer_warnings=warnings,
        _head_matrix=head_matrix,
    )
