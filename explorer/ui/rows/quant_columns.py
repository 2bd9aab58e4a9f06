"""Columns of the values table for a quantised GGUF row: block, scale, (minimum), integer quant.

Each value is scale × quant (+ minimum) of its block; the table shows those stored parts
beside the decoded value, as the bits columns do for float rows.
"""

from __future__ import annotations

import numpy as np

from explorer.core.rows.bits import QuantBlocks

BLOCK, SCALE, QUANT, MINIMUM = 2, 3, 4, 5  # column numbers, after index and value


def headers(blocks: QuantBlocks) -> tuple[str, ...]:
    names = ("index", "value", "block", "scale", "quant")
    return names + ("min",) if blocks.minimum is not None else names


def header_tips(blocks: QuantBlocks) -> tuple[str, ...]:
    n, bits = blocks.block_size, blocks.quant_bits
    tips = (
        "Position in the row",
        f"The decoded value: scale × quant{' + min' if blocks.minimum is not None else ''}",
        f"Which block of {n} values ({blocks.block_bytes} bytes, "
        f"{blocks.bits_per_value:g} bits per value) holds it",
        "The block's scale (stored as float16)",
        f"The stored {bits}-bit integer quant of this value",
    )
    return (
        tips + ("The block's minimum (stored as float16)",) if blocks.minimum is not None else tips
    )


def display(blocks: QuantBlocks, i: int, col: int) -> str | None:
    b, j = divmod(i, blocks.block_size)
    if col == BLOCK:
        return str(b)
    if col == SCALE:
        return str(np.float32(blocks.scale[b]))
    if col == QUANT:
        return str(int(blocks.quants[b, j]))
    if col == MINIMUM and blocks.minimum is not None:
        return str(np.float32(blocks.minimum[b]))
    return None


def exact(blocks: QuantBlocks, i: int, col: int) -> object:
    b, j = divmod(i, blocks.block_size)
    if col == BLOCK:
        return b
    if col == SCALE:
        return float(blocks.scale[b])
    if col == QUANT:
        return int(blocks.quants[b, j])
    if col == MINIMUM and blocks.minimum is not None:
        return float(blocks.minimum[b])
    return None


def meaning(blocks: QuantBlocks, i: int) -> str:
    """e.g. "block 3: 0.0123 × -17 = -0.2091" (+ min for the *_1 types)."""
    b, j = divmod(i, blocks.block_size)
    scale, q = np.float32(blocks.scale[b]), int(blocks.quants[b, j])
    value = scale * np.float32(q)
    text = f"block {b}: {scale} × {q}"
    if blocks.minimum is not None:
        value = value + blocks.minimum[b]
        text += f" + {np.float32(blocks.minimum[b])}"
    return f"{text} = {np.float32(value)}  ({blocks.type_name})"
