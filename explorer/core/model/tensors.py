"""Where the input embedding and the output head live, by tensor name (or by shape)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ModelFormatError

if TYPE_CHECKING:
    from explorer.core.model.formats.gguf import GGUFTensor

_EMBED_BASES = (
    "model.embed_tokens.weight",
    "shared.weight",  # T5: before decoder.embed_tokens.weight, which is a copy of it
    "model.decoder.embed_tokens.weight",  # OPT, BART
    "backbone.embeddings.weight",  # Mamba
    "transformer.embedding.word_embeddings.weight",  # ChatGLM
    "embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "embeddings.word_embeddings.weight",
    "tok_embeddings.weight",
    "gpt_neox.embed_in.weight",
    "word_embeddings.weight",
    "decoder.embed_tokens.weight",
    "encoder.embed_tokens.weight",
)
EMBEDDING_NAMES = _EMBED_BASES + tuple(
    f"{prefix}.{name}" for prefix in ("bert", "roberta") for name in _EMBED_BASES
)
OUTPUT_NAMES = (
    "lm_head.weight",
    "embed_out.weight",
    "output.weight",
    "transformer.output_layer.weight",  # ChatGLM
)
# Rows beyond config.json's vocab_size that still count as padding of the embedding.
MAX_PADDING = 1024


def config_value(config: dict, key: str) -> object:
    """`key` in config.json, or in its nested text_config (multimodal models)."""
    if key in config:
        return config[key]
    text = config.get("text_config")
    return text.get(key) if isinstance(text, dict) else None


def find_embedding(
    path: Path, shapes: dict[str, tuple[int, ...]], config: dict, tensor: str | None
) -> str:
    """The input embedding's name: --tensor, a known name, or the 2-D tensor matching vocab_size
    (padded a little beyond it is fine), or the only 2-D tensor."""
    if tensor is not None:
        if tensor not in shapes:
            raise ModelFormatError(f"{path.name}: has no tensor named {tensor!r}")
        return tensor
    name = next((n for n in EMBEDDING_NAMES if n in shapes), None)
    if name is not None:
        return name
    matrices = [n for n in sorted(shapes) if len(shapes[n]) == 2 and not n.endswith(OUTPUT_NAMES)]
    vocab_size = config_value(config, "vocab_size")
    if isinstance(vocab_size, int):
        exact = [n for n in matrices if shapes[n][0] == vocab_size]
        padded = [n for n in matrices if 0 < shapes[n][0] - vocab_size <= MAX_PADDING]
        for group in (exact, padded):
            if group:  # names that say "embed" first, then the first in sorted order
                return sorted(group, key=lambda n: "embed" not in n.lower())[0]
    if len(matrices) == 1:
        return matrices[0]
    raise ModelFormatError(
        f"{path.name}: no input embedding found (looked for {EMBEDDING_NAMES[0]} and "
        f"{len(EMBEDDING_NAMES) - 1} other names); pick one with --tensor NAME"
    )


GGUF_EMBEDDING = "token_embd.weight"
GGUF_OUTPUT = "output.weight"


def gguf_embedding(file: Path, tensors: dict[str, GGUFTensor], tensor: str | None) -> GGUFTensor:
    """The embedding tensor: `tensor`, else token_embd.weight; 2-D."""
    name = tensor or GGUF_EMBEDDING
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
