"""Everything the viewer needs about a few rows, read in one go (call it off the GUI thread)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.model.decode import decode_rows
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.rows.numbers import RowStats, row_stats


@dataclass(frozen=True)
class RowData:
    id: int
    label: str
    dtype: str  # safetensors spelling: BF16, F16, F32…
    raw: np.ndarray  # the stored values, in the stored dtype (for exact bits)
    values: np.ndarray  # decoded exactly to float32 (float64 for F64)
    stats: RowStats
    unused: bool  # a padding row the tokenizer never produces


def load_rows(model: EmbeddingModel, ids: Sequence[int]) -> list[RowData]:
    raw = model.cold_rows(list(ids))  # read from the file: a cold row costs the disk, ~1 ms
    values = decode_rows(raw)
    return [
        RowData(
            int(i),
            model.label(int(i)),
            model.dtype,
            raw[n],
            values[n],
            row_stats(values[n]),
            model.is_unused(int(i)),
        )
        for n, i in enumerate(ids)
    ]
