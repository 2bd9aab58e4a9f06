"""A model's input embedding as opened: its memory map, tokenizer, head evidence and config.

Every format's opener (`explorer.core.model.open`) ends in `assemble`, so tied-or-not is judged
the same way for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ModelFormatError, TokenError
from explorer.core.filecheck import MappedScan, check_mapped, first_change
from explorer.core.model import heads
from explorer.core.model.decode import decode_rows
from explorer.core.model.formats.safetensors import SafetensorsFile
from explorer.core.model.heads import HeadEvidence
from explorer.core.model.tensors import config_value

if TYPE_CHECKING:  # `tokenizers` loads only where a tokenizer is built, never in the window
    from explorer.core.tokenizer.match import Verdict
    from explorer.core.tokenizer.tokens import TokenizerInfo
    from explorer.core.tokenizer.vocab_table import VocabTokenizer


@dataclass
class EmbeddingModel:
    """An opened model: the embedding matrix mapped read-only, its tokenizer and head."""

    path: Path
    format: str
    files: list[Path]
    tensor: str
    dtype: str
    rows: int
    dim: int
    matrix: np.ndarray  # read-only memmap [rows, dim] in the stored dtype
    output_tensor: str | None
    tied: bool | None
    tokenizer: TokenizerInfo | VocabTokenizer | None
    config: dict = field(default_factory=dict)
    _handles: list[SafetensorsFile] = field(default_factory=list, repr=False)
    head: HeadEvidence = field(default_factory=lambda: HeadEvidence(None, "unknown"))
    tokenizer_warnings: list[str] = field(default_factory=list)
    _head_matrix: np.ndarray | None = field(default=None, repr=False)
    tokenizer_match: Verdict | None = None  # check_tokenizer's verdict, once made

    @property
    def warnings(self) -> list[str]:
        mismatch = self.tokenizer_match.warning if self.tokenizer_match else None
        return [*self.head.warnings, *self.tokenizer_warnings, *([mismatch] if mismatch else [])]

    def use_tokenizer(
        self, tokenizer: TokenizerInfo | VocabTokenizer | None, warnings: list[str]
    ) -> None:
        """Read the rows through another tokenizer (one from elsewhere); check_tokenizer judges
        whether it belongs to them."""
        self.tokenizer, self.tokenizer_warnings, self.tokenizer_match = tokenizer, warnings, None
        for cached in ("used_rows", "unused_rows"):
            self.__dict__.pop(cached, None)

    def check_tokenizer(self, ctx: JobContext = NULL_CONTEXT) -> Verdict | None:
        """Does the tokenizer belong to these rows? Reads a few thousand rows (worker thread);
        sets `tokenizer_match` (None: no tokenizer)."""
        from explorer.core.tokenizer.match_cache import check_model

        self.tokenizer_match = check_model(self, ctx=ctx)
        return self.tokenizer_match

    @property
    def tokenizer_source(self) -> str | None:
        return self.tokenizer.source if self.tokenizer is not None else None

    def check_head(self, ctx: JobContext = NULL_CONTEXT) -> HeadEvidence:
        """Compare every row of a stored head that matched in the sampled rows (in blocks).

        Costs one read of both matrices; run it off the GUI thread. Sets `head` and `tied`.
        """
        if self.head.complete or self._head_matrix is None or self.output_tensor is None:
            return self.head
        same = heads.same_rows_in_blocks(self.matrix, self._head_matrix, ctx)
        tie_flag = config_value(self.config, "tie_word_embeddings")
        self.head = heads.with_head(self.tensor, self.output_tensor, same, tie_flag, True)
        self.tied = self.head.tied
        return self.head

    @cached_property
    def file_size(self) -> int:
        """Bytes of the model's files (stat()ed once, on the opening worker: a stat on the GUI
        thread took 7 ms while the index child read the file)."""
        return sum(f.stat().st_size for f in self.files)

    @property
    def tokenizer_vocab_size(self) -> int | None:
        return self.tokenizer.vocab_size if self.tokenizer else None

    @cached_property
    def used_rows(self) -> np.ndarray:
        """bool [rows]: True where the tokenizer has a token for the row (all rows without one)."""
        mask = np.ones(self.rows, dtype=bool)
        if self.tokenizer is not None:
            mask = self.tokenizer.present_mask(self.rows)
        mask.flags.writeable = False  # shared by every caller
        return mask

    @cached_property
    def unused_rows(self) -> int:
        """Rows the tokenizer never produces (padding up to a round vocabulary size)."""
        return int(self.rows - np.count_nonzero(self.used_rows))

    def check_id(self, token_id: int) -> int:
        if not 0 <= token_id < self.rows:
            raise TokenError(
                f"token id {token_id} is out of range: the embedding has {self.rows} rows"
            )
        return int(token_id)

    def is_unused(self, token_id: int) -> bool:
        return self.tokenizer is not None and not self.tokenizer.has_id(token_id)

    def label(self, token_id: int) -> str:
        """Readable label for any row id, including rows the tokenizer does not use."""
        if self.tokenizer is None:
            return f"#{token_id}"
        return self.tokenizer.label(token_id)

    @cached_property
    def scattered_matrix(self) -> np.ndarray:
        """``matrix`` for gathering scattered rows in a kernel (the neighbour search's re-rank):
        its page faults read only what they touch (cold_rows.random_access_map)."""
        from explorer.core.model.cold_rows import random_access_map

        return random_access_map(self.matrix)

    def raw_rows(self, ids) -> np.ndarray:
        ids = self._checked_ids(ids)
        check_mapped(self.matrix)  # a file that shrank since it was opened would kill us (SIGBUS)
        return np.asarray(self.matrix[ids])

    def cold_rows(self, ids) -> np.ndarray:
        """``raw_rows`` for a few rows that may not be in memory: read from the file, a row a
        call (a fault in the memory map reads synchronously around the page: ~10x slower)."""
        ids = self._checked_ids(ids)
        check_mapped(self.matrix)  # the same verdict on a cut file as raw_rows'
        from explorer.core.model.cold_rows import read_rows

        rows = read_rows(self.matrix, ids.tolist())
        return rows if rows is not None else self.raw_rows(ids)

    def _checked_ids(self, ids) -> np.ndarray:
        if self.matrix.shape[0] != self.rows:  # a worker may still ask after the model was closed
            raise ModelFormatError(f"{self.path.name}: the model was closed")
        try:
            ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        except OverflowError:
            raise TokenError(
                f"a token id is out of range: the embedding has {self.rows} rows"
            ) from None
        bad = ids[(ids < 0) | (ids >= self.rows)]
        if bad.size:
            self.check_id(int(bad[0]))
        return ids

    def vectors(self, ids) -> np.ndarray:
        """Rows decoded exactly to float32 (float64 for F64), shape [len(ids), dim]."""
        return decode_rows(self.raw_rows(ids))

    def vector(self, token_id: int) -> np.ndarray:
        return self.vectors([token_id])[0]

    def decode_block(self, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop) decoded to float32 (float64 for F64), whatever the stored format.

        The one way to stream a whole matrix of any dtype (quantised GGUF included) in blocks;
        kernels that read ``matrix`` directly must handle its dtype themselves.
        """
        return _decoded(self.matrix, max(0, start), min(self.rows, stop))

    def decode_output_block(self, start: int, stop: int) -> np.ndarray | None:
        """Rows [start, stop) of the separate output head, decoded like decode_block; None if the
        model has no separate head tensor."""
        head = self._head_matrix
        if head is None or self.output_tensor is None:
            return None
        return _decoded(head, max(0, start), min(len(head), max(0, stop)))

    def changed_on_disk(self) -> str | None:
        """Why the model's files no longer match what was opened (None: unchanged); cheap."""
        return first_change(self._handles)

    def info(self) -> dict:
        return {
            "path": str(self.path),
            "format": self.format,
            "tensor": self.tensor,
            "rows": self.rows,
            "dim": self.dim,
            "dtype": self.dtype,
            "tied": self.tied,
            "head": self.head.words,
            "warnings": self.warnings,
            "output_tensor": self.output_tensor,
            "tokenizer_vocab_size": self.tokenizer_vocab_size,
            "tokenizer_source": self.tokenizer_source,
            **(
                {"tokenizer_match": self.tokenizer_match.as_dict()}
                if self.tokenizer_match is not None
                else {}
            ),
            "unused_rows": self.unused_rows,
            "file_size": self.file_size,
            "files": [str(f) for f in self.files],
        }

    def close(self) -> None:
        self.__dict__.pop("scattered_matrix", None)
        self.matrix = np.zeros((0, *self.matrix.shape[1:]), dtype=self.matrix.dtype)
        self._head_matrix = None
        for h in self._handles:
            h.close()
        self._handles.clear()


def assemble(
    path: Path,
    fmt: str,
    files: list[Path],
    tensor: tuple[str, str, tuple[int, int]],
    matrix: np.ndarray,
    output: tuple[str | None, np.ndarray | None],
    config: dict,
    tokenizer: tuple[TokenizerInfo | None, list[str]],
    handles: list[SafetensorsFile] | None = None,
    gguf: bool = False,
) -> EmbeddingModel:
    """The model from what a format's opener found: the embedding (name, dtype, [rows, dim]) and
    its memory map, the output head (name and map, or None), the tokenizer and its warnings.
    Tied or not is judged here, the same way for every format."""
    name, dtype, (rows, dim) = tensor
    evidence = head_evidence(name, matrix, output[0], output[1], config, gguf=gguf)
    return EmbeddingModel(
        path=path,
        format=fmt,
        files=files,
        tensor=name,
        dtype=dtype,
        rows=rows,
        dim=dim,
        matrix=matrix,
        output_tensor=output[0],
        tied=evidence.tied,
        tokenizer=tokenizer[0],
        config=config,
        _handles=handles or [],
        head=evidence,
        tokenizer_warnings=tokenizer[1],
        _head_matrix=output[1],
    )


def head_evidence(
    name: str,
    matrix: np.ndarray,
    output: str | None,
    head_matrix: np.ndarray | None,
    config: dict,
    gguf: bool = False,
) -> HeadEvidence:
    """Tied or not from the contents: sampled rows now; `check_head` compares the rest."""
    tie_flag = config_value(config, "tie_word_embeddings")
    if output is None:
        return heads.without_head(config, tie_flag, gguf=gguf)
    if head_matrix is None:
        return heads.with_head(name, output, False, tie_flag, True)
    rows = heads.sample_rows(matrix.shape[0])
    same = heads.same_rows(matrix, head_matrix, rows)
    complete = not same or matrix.shape[0] <= len(rows)
    return heads.with_head(name, output, same, tie_flag, complete)


def _decoded(matrix: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) decoded, read so that a file truncated meanwhile is an error, never
    SIGBUS (filecheck.MappedScan); the result never points into the map."""
    with MappedScan(matrix) as source:
        raw = np.asarray(source.rows(start, stop))
        out = decode_rows(raw)
        if source.leased and np.may_share_memory(out, raw):
            out = out.copy()  # a view of the map must not outlive the lease
    return out
