"""The embedding layer is a row lookup: onehot(t) · E computed for real, next to E[t].

The product is computed block by block (one decoded block at a time, never a dense
vocab × d_model float32 copy): each block of rows is multiplied by its slice of the one-hot
vector and the partial results are summed. Every term but one is an exact zero, so the sum
equals the looked-up row bit for bit, unless some row holds inf/NaN (0 · inf = NaN).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from explorer.core.analysis.blocks import iter_blocks
from explorer.core.context import NULL_CONTEXT, JobContext


@dataclass
class Cost:
    rows: int
    dim: int
    bytes_per_value: float
    matrix_bytes: int  # what the product reads: the whole tensor (its size on disk)
    row_bytes: int  # what the lookup reads: one row
    product_flops: int  # a multiply and an add per matrix value
    lookup_flops: int  # none: the lookup only copies

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def cost_of(model) -> Cost:
    values = model.rows * model.dim
    nbytes = int(getattr(model.matrix, "nbytes", 0)) or values * model.matrix.dtype.itemsize
    per_value = nbytes / values if values else 0.0
    return Cost(
        rows=model.rows,
        dim=model.dim,
        bytes_per_value=per_value,
        matrix_bytes=nbytes,
        row_bytes=int(round(model.dim * per_value)),
        product_flops=2 * values,
        lookup_flops=0,
    )


@dataclass
class Explanation:
    id: int
    piece: str | None
    text: str
    product: np.ndarray  # onehot(t) · E, computed in blocks
    lookup: np.ndarray  # E[t]
    identical: int  # values where product == lookup
    cost: Cost
    tied: bool | None
    output_tensor: str | None
    product_seconds: float
    lookup_seconds: float

    @property
    def total(self) -> int:
        return int(self.lookup.size)

    @property
    def statement(self) -> str:
        return f"identical: {self.identical} of {self.total} values"

    def as_dict(self) -> dict:
        with np.errstate(invalid="ignore"):
            diff = float(np.nanmax(np.abs(self.product - self.lookup), initial=0.0))
        return {
            "id": self.id,
            "piece": self.piece,
            "text": self.text,
            "one_hot": {"length": self.cost.rows, "position": self.id},
            "identical": self.identical,
            "total": self.total,
            "statement": self.statement,
            "max_abs_difference": diff,
            "product": self.product.tolist(),
            "lookup": self.lookup.tolist(),
            "cost": self.cost.as_dict(),
            "tied": self.tied,
            "output_tensor": self.output_tensor,
            "seconds": {"product": self.product_seconds, "lookup": self.lookup_seconds},
        }


def one_hot_product(model, token_id: int, ctx: JobContext = NULL_CONTEXT) -> np.ndarray:
    """onehot(token_id) · E over every block of rows: reads the whole matrix, as a product must."""
    t = model.check_id(token_id)
    acc: np.ndarray | None = None
    for start, block in iter_blocks(model.decode_block, model.rows, model.dim, ctx, "product"):
        piece = np.zeros(len(block), dtype=block.dtype)
        if start <= t < start + len(block):
            piece[t - start] = 1
        with np.errstate(invalid="ignore", over="ignore"):
            part = piece @ block
            acc = part if acc is None else acc + part
    return acc if acc is not None else np.zeros(model.dim, dtype=np.float32)


def explain(model, token_id: int, ctx: JobContext = NULL_CONTEXT) -> Explanation:
    """The product and the lookup of one token, their equality counted, and what each costs."""
    t = model.check_id(token_id)
    began = time.perf_counter()
    product = one_hot_product(model, t, ctx)
    product_seconds = time.perf_counter() - began
    began = time.perf_counter()
    lookup = model.vector(t)
    lookup_seconds = time.perf_counter() - began
    identical = int(np.count_nonzero(product == lookup))
    piece = model.tokenizer.piece(t) if model.tokenizer is not None else None
    return Explanation(
        id=t,
        piece=piece,
        text=model.label(t),
        product=product,
        lookup=lookup,
        identical=identical,
        cost=cost_of(model),
        tied=model.tied,
        output_tensor=model.output_tensor,
        product_seconds=product_seconds,
        lookup_seconds=lookup_seconds,
    )
