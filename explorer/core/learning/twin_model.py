"""A model's random twin dressed as an `EmbeddingModel`, so every view (neighbours, map,
statistics, cosine distributions, values) can show the twin with no change of its own.

Rows come from `RandomTwin` (generated on demand, never stored whole); `matrix` is a zero-stride
placeholder of the right shape in a dtype no search kernel reads, so every scan streams the
rows through `decode_block`. Caches (statistics, the fast index) key on a model's files: the
twin's one file is a small JSON marker in the cache folder, named after the real tensor and the
seed, so nothing cached for the real matrix is ever served for its twin.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.cache import default_cache_dir, tensor_file
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.model.heads import HeadEvidence
from explorer.core.tokenizer.match import Verdict

if TYPE_CHECKING:  # twin's kernels import numba (LLVM): only when a twin is made
    from explorer.core.learning.twin import RandomTwin

TWIN_DTYPE = "F32"


def _placeholder(rows: int, dim: int) -> np.ndarray:
    """[rows, dim] int32 with no memory behind it: a shape for whoever asks, data for no one
    (4-byte items, so scans size their blocks as for the float32 rows decode_block gives)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.int32), (rows, dim), (0, 0))


def _marker(model: EmbeddingModel, seed: int, cache_dir: Path) -> Path:
    source = tensor_file(model).resolve()
    st = source.stat()
    about = {
        "twin_of": str(source),
        "tensor": model.tensor,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "seed": seed,
    }
    text = json.dumps(about, sort_keys=True)
    name = hashlib.sha256(text.encode()).hexdigest()[:24]
    folder = cache_dir / "twins"
    path = folder / f"{name}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        why = f"cannot write the random twin's marker ({e.strerror})"
        raise ExplorerError(f"{folder}: {why}") from None
    return path


@dataclass
class TwinEmbedding(EmbeddingModel):
    """The random twin of `real`: same rows, dim, tokenizer and labels; values are noise."""

    twin: RandomTwin | None = None
    real: EmbeddingModel | None = None

    def _rows(self) -> RandomTwin:
        assert self.twin is not None
        return self.twin

    def raw_rows(self, ids) -> np.ndarray:
        return self.vectors(ids)

    def vectors(self, ids) -> np.ndarray:
        return self._rows().vectors(ids)

    def decode_block(self, start: int, stop: int) -> np.ndarray:
        return self._rows().decode_block(start, stop)

    def decode_output_block(self, start: int, stop: int) -> np.ndarray | None:
        return None

    @property
    def file_size(self) -> int:  # the twin is never stored: the size of what is open
        return self.real.file_size if self.real is not None else 0

    def check_head(self, ctx: JobContext = NULL_CONTEXT) -> HeadEvidence:
        return self.head

    def close(self) -> None:  # the real model's files belong to the real model
        pass


def twin_model(
    model: EmbeddingModel, seed: int = 0, cache_dir: str | Path | None = None
) -> TwinEmbedding:
    """The twin of `model` (reads a seeded sample of its rows for the per-dimension scale)."""
    real = model.real if isinstance(model, TwinEmbedding) and model.real is not None else model
    from explorer.core.learning.twin import RandomTwin

    twin = RandomTwin.of(real, seed=seed)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    fields = {f.name: getattr(real, f.name) for f in dataclasses.fields(EmbeddingModel)}
    fields.update(
        format=f"random twin of {real.format} (seed {seed})",
        files=[_marker(real, seed, folder)],
        dtype=TWIN_DTYPE,
        matrix=_placeholder(real.rows, real.dim),
        output_tensor=None,
        tied=None,
        _handles=[],
        head=HeadEvidence(None, "none: a random twin has no output head"),
        _head_matrix=None,
        tokenizer_match=Verdict.unchecked("not checked: a random twin's rows are noise by design"),
    )
    return TwinEmbedding(**fields, twin=twin, real=real)
