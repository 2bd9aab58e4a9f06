"""One token's row at both precisions, with the quant blocks behind the values of each."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.quant.precision import Precision, simulate
from explorer.core.rows.bits import QuantBlocks, quant_blocks


@dataclass(frozen=True)
class RowPair:
    id: int
    type_name: str
    ref: np.ndarray  # float32 [dim]
    other: np.ndarray  # float32 [dim]
    blocks: QuantBlocks | None  # the other row's scales (None for float types and K-quants)
    ref_blocks: QuantBlocks | None = None  # the reference row's, when it is stored quantised
    ref_type: str = ""  # the reference's stored type

    @property
    def half_step(self) -> np.ndarray | None:
        """float32 [dim]: half the quantisation step of each value's block (the largest error
        rounding can make there), or None."""
        if self.blocks is None:
            return None
        return np.repeat(np.abs(self.blocks.scale) / 2, self.blocks.block_size)


def row_pair(ref: Precision, other: Precision | str, token_id: int) -> RowPair:
    """Row `token_id` of `ref` and of `other`: a Precision (a second file), or a type name to
    quantise this one row to with the gguf package (rows are quantised block by block, so it
    equals the row of the whole simulated matrix)."""
    r = ref.decode_block(token_id, token_id + 1)
    ref_blocks = quant_blocks(np.asarray(ref.matrix[token_id]))
    if isinstance(other, str):
        r.flags.writeable = False
        row = simulate(Precision(ref.label, "F32", r, ref.dim, simulated=True), other)
        q, raw = row.decode_block(0, 1), row.matrix[0]
        type_name = other
    else:
        q, raw = other.decode_block(token_id, token_id + 1), np.asarray(other.matrix[token_id])
        type_name = other.type_name
    return RowPair(
        int(token_id), type_name, r[0], q[0], quant_blocks(raw), ref_blocks, ref.type_name
    )
