"""A matrix at some precision: what a file stores, or what quantising another matrix with the
`gguf` package would store (held in memory in the same layout as a GGUF tensor)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gguf import quants
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as T

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import AnalysisError
from explorer.core.filecheck import check_mapped
from explorer.core.model.decode import decode_rows, ggml_type
from explorer.core.model.dtypes import BF16, stored_name
from explorer.core.quant import kernels
from explorer.core.quant.types import GGML_TYPES, SIMULATED_TYPES

# Rows quantised at a time: gguf's numpy quantisers make several float32 copies of a block.
SIMULATE_BLOCK_VALUES = 1 << 22


def type_of(matrix: np.ndarray) -> str:
    """The GGML type name of a stored matrix (F32, BF16, Q4_0, …)."""
    qtype = ggml_type(matrix)
    if qtype is not None:
        return T(qtype).name
    return stored_name(matrix.dtype)


@dataclass
class Precision:
    """One matrix as stored (memory map or in-memory quantised copy) and what it is."""

    label: str  # the file name, or "Q4_0 (simulated)"
    type_name: str
    matrix: np.ndarray  # [rows, stored width]: a model's memory map or simulated blocks
    dim: int
    simulated: bool = False

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    def _kernel_input(self, block: np.ndarray) -> tuple[np.ndarray, int]:
        """Stored rows as bytes, and the kernel's kind for them (decoded to float32 first when
        the kernel does not read the stored type)."""
        block = np.ascontiguousarray(block)
        kind = kernels.KINDS.get(T[self.type_name]) if self.type_name in GGML_TYPES else None
        if kind is None:
            block, kind = np.ascontiguousarray(decode_rows(block), dtype=np.float32), kernels.F32
        raw = block.view(np.uint8)
        raw.flags.writeable = False  # one compiled signature: as read-only as a memory map
        return raw, kind

    def raw_block(self, start: int, stop: int) -> tuple[np.ndarray, int]:
        """Rows [start, stop) as the kernel reads them: bytes and their kind."""
        if not self.simulated:
            check_mapped(self.matrix)
        return self._kernel_input(self.matrix[start:stop])

    def _decode(self, block: np.ndarray) -> np.ndarray:
        raw, kind = self._kernel_input(block)
        out = np.empty((raw.shape[0], self.dim), dtype=np.float32)
        if raw.shape[0]:
            kernels.decode_rows(
                raw, kind, self.dim, kernels.F16_TABLE, out, kernels.parts_for(raw.shape[0])
            )
        return out

    def decode_block(self, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop) as float32, decoded as `gguf.quants.dequantize` decodes them."""
        if not self.simulated:
            check_mapped(self.matrix)
        return self._decode(self.matrix[start:stop])

    def decode_ids(self, ids: np.ndarray) -> np.ndarray:
        """The rows `ids` as float32 (any order)."""
        if not self.simulated:
            check_mapped(self.matrix)
        return self._decode(np.asarray(self.matrix[np.asarray(ids, dtype=np.int64)]))


def of_model(model) -> Precision:
    """A model's embedding as it is stored."""
    return Precision(model.path.name, type_of(model.matrix), model.matrix, model.dim)


def check_type(type_name: str, dim: int) -> T:
    if type_name not in SIMULATED_TYPES:
        raise AnalysisError(
            f"cannot simulate {type_name!r}: the gguf package quantises "
            f"{', '.join(SIMULATED_TYPES)}"
        )
    qtype = T[type_name]
    block = GGML_QUANT_SIZES[qtype][0]
    if dim % block:
        raise AnalysisError(
            f"cannot simulate {type_name}: rows of {dim} values do not split into blocks of {block}"
        )
    return qtype


def simulate(ref: Precision, type_name: str, ctx: JobContext = NULL_CONTEXT) -> Precision:
    """`ref` quantised to `type_name` with `gguf.quants.quantize`, in row blocks; nothing is
    written to disk. The result holds what a GGUF file of that type would store (for Q4_0
    about a seventh of the float32 size)."""
    qtype = check_type(type_name, ref.dim)
    block_rows = max(1, SIMULATE_BLOCK_VALUES // max(1, ref.dim))
    first = quants.quantize(np.zeros((1, ref.dim), dtype=np.float32), qtype)
    if qtype == T.BF16:
        stored = np.empty((ref.rows, ref.dim), dtype=BF16)
    elif qtype == T.F16:
        stored = np.empty((ref.rows, ref.dim), dtype=np.float16)
    else:
        tagged = np.dtype(np.uint8, metadata={"ggml_type": int(qtype)})
        stored = np.empty((ref.rows, first.shape[-1]), dtype=tagged)
    for start in range(0, ref.rows, block_rows):
        ctx.check("simulation")
        stop = min(ref.rows, start + block_rows)
        values = ref.decode_block(start, stop)
        with np.errstate(all="ignore"):  # NaN/inf rows stay NaN/inf, as llama.cpp's would
            q = quants.quantize(values, qtype)
        stored.view(np.uint8)[start:stop] = q.view(np.uint8).reshape(stop - start, -1)
        ctx.progress(stop / ref.rows)
    stored.flags.writeable = False
    return Precision(f"{type_name} (simulated)", type_name, stored, ref.dim, simulated=True)
