"""Is the output head tied to the input embedding? Decided from what the files hold, with the
config as a second witness; contradictions between the two become warnings."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext

SAMPLE_ROWS = 64
COMPARE_BLOCK_BYTES = 32 << 20
_DECODER_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
_ENCODER_TYPES = {
    "bert", "roberta", "xlm-roberta", "distilbert", "electra", "albert", "mpnet", "camembert",
    "deberta", "deberta-v2", "nomic_bert", "modernbert",
}  # fmt: skip


@dataclass
class HeadEvidence:
    """Whether the output head is the embedding (tied), and what shows it."""

    tied: bool | None
    words: str  # what the model panel and `info` say about the head
    warnings: list[str] = field(default_factory=list)
    complete: bool = True  # False: only sampled rows were compared so far


def same_rows(a: np.ndarray, b: np.ndarray, rows: np.ndarray | None = None) -> bool:
    """True when two raw matrices hold the same bytes (in `rows` only, when given)."""
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype.metadata != b.dtype.metadata:
        return False
    if rows is not None:
        x, y = np.asarray(a[rows]).view(np.uint8), np.asarray(b[rows]).view(np.uint8)
        return bool(np.array_equal(x, y))
    return same_rows_in_blocks(a, b)


def same_rows_in_blocks(a: np.ndarray, b: np.ndarray, ctx: JobContext = NULL_CONTEXT) -> bool:
    """Every row, in blocks; stops at the first block that differs."""
    step = max(1, COMPARE_BLOCK_BYTES // max(1, a.shape[1] * a.dtype.itemsize))
    for start in range(0, a.shape[0], step):
        ctx.check("head comparison")
        x = np.asarray(a[start : start + step]).view(np.uint8)
        y = np.asarray(b[start : start + step]).view(np.uint8)
        if not np.array_equal(x, y):
            return False
    return True


def sample_rows(rows: int) -> np.ndarray:
    return np.unique(np.linspace(0, max(0, rows - 1), min(rows, SAMPLE_ROWS)).astype(np.int64))


def is_encoder(config: dict) -> str | None:
    """The architecture name when config.json describes an encoder (no output head), else None."""
    archs = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    if any(a.endswith(_DECODER_SUFFIXES) for a in archs) or config.get("is_decoder"):
        return None
    if config.get("model_type") in _ENCODER_TYPES:
        return archs[0] if archs else str(config["model_type"])
    if archs and not any(a.endswith(_DECODER_SUFFIXES) for a in archs):
        return archs[0]
    return None


def with_head(
    embedding: str, head: str, same: bool, tie_flag: object, complete: bool
) -> HeadEvidence:
    """Both an embedding and a head are stored: the comparison decides, the config is checked."""
    if same:
        how = "identical values" if complete else f"identical in {SAMPLE_ROWS} sampled rows"
        words = f"tied: {head} holds {how} (a copy stored twice)"
        ev = HeadEvidence(True, words, complete=complete)
        ev.warnings.append(f"an identical copy of the embedding is stored twice ({head})")
        if tie_flag is False:
            ev.warnings.append(
                f"config.json says tie_word_embeddings: false, but {head} equals {embedding}"
            )
        return ev
    ev = HeadEvidence(False, f"untied: separate output head {head}")
    if tie_flag is True:
        ev.warnings.append(
            f"config.json says tie_word_embeddings: true, but {head} differs from {embedding}"
        )
    return ev


def without_head(config: dict, tie_flag: object, gguf: bool = False) -> HeadEvidence:
    """No output head in the files: tied, an encoder or word vectors, or a head left out."""
    if gguf:
        return HeadEvidence(True, "tied: no output.weight stored; llama.cpp reuses token_embd")
    if tie_flag is False:
        return HeadEvidence(
            False,
            "untied, but the output head is not in these files",
            ["output head not in these files (config.json says tie_word_embeddings: false)"],
        )
    if tie_flag is True:
        return HeadEvidence(True, "tied: no separate head stored; config.json ties it")
    if not config:
        return HeadEvidence(None, "no output head in these files (word vectors or an encoder)")
    encoder = is_encoder(config)
    if encoder is not None:
        return HeadEvidence(None, f"no output head: an encoder ({encoder})")
    return HeadEvidence(True, "tied: no separate head stored (transformers' default)")
