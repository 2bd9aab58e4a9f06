"""`Model.E`: the embedding matrix as a lazy, read-only, array-like view.

Indexing decodes only the rows asked for, exactly, to float32 (float64 for F64 files), from the
read-only memory map: `E[3710]`, `E[[1, 2, 3]]`, `E[10:20]`, `E[ids, :8]`. `np.asarray(E)`
decodes the whole matrix (it then all sits in memory: mind the size).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from explorer.core.model.embedding import EmbeddingModel

BLOCK_BYTES = 64 << 20  # decoded bytes per block when the whole matrix is asked for


class RowView:
    """Array-like access to E [rows, dim]; each read decodes the rows it touches."""

    def __init__(self, model: EmbeddingModel):
        self._model = model

    @property
    def shape(self) -> tuple[int, int]:
        return (self._model.rows, self._model.dim)

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self) -> np.dtype:
        """The decoded dtype: float32, or float64 for F64 files."""
        return np.dtype(np.float64 if self._model.dtype == "F64" else np.float32)

    def __len__(self) -> int:
        return self._model.rows

    def __getitem__(self, key: Any) -> np.ndarray:
        rest: tuple = ()
        if isinstance(key, tuple):
            key, rest = (key[0], key[1:]) if key else (slice(None), ())
        rows = self._rows(key)
        return rows[(Ellipsis, *rest)] if rest else rows

    def _rows(self, key: Any) -> np.ndarray:
        m = self._model
        if isinstance(key, int | np.integer):
            i = int(key)
            return m.vectors([i + m.rows if -m.rows <= i < 0 else i])[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(m.rows)
            if step == 1:
                return m.decode_block(start, stop) if stop > start else self._empty(0)
            key = np.arange(start, stop, step)
        ids = np.asarray(key)
        if ids.dtype == bool:
            if ids.shape != (m.rows,):
                raise IndexError(f"a boolean index must have {m.rows} values, not {ids.shape}")
            ids = np.flatnonzero(ids)
        if ids.size == 0:
            return self._empty(0).reshape(*ids.shape, m.dim)
        if not np.issubdtype(ids.dtype, np.integer):
            raise IndexError(f"E takes ids (integers), slices or a boolean mask, not {ids.dtype}")
        flat = ids.reshape(-1).astype(np.int64)
        flat = np.where((flat < 0) & (flat >= -m.rows), flat + m.rows, flat)
        return m.vectors(flat).reshape(*ids.shape, m.dim)

    def _empty(self, n: int) -> np.ndarray:
        return np.zeros((n, self._model.dim), dtype=self.dtype)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        m = self._model
        out = np.empty(self.shape, dtype=self.dtype)
        step = max(1, BLOCK_BYTES // max(1, m.dim * out.itemsize))
        for start in range(0, m.rows, step):
            out[start : start + step] = m.decode_block(start, start + step)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __repr__(self) -> str:
        m = self._model
        return (
            f"<E: {m.rows:,} × {m.dim} stored as {m.dtype}, decoded to {self.dtype.name} when read>"
        )
