"""The GGUF types a matrix can be quantised to here, and their cost, without the kernels (so
the window can list them before any numba import)."""

from __future__ import annotations

import numpy as np
from gguf import quants
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as T


def _quantisable() -> tuple[str, ...]:
    """The types `gguf.quants.quantize` implements (checked, not assumed), largest first."""
    names = []
    for qtype in T:
        if qtype in (T.F32, T.F64) or qtype.name.startswith(("I8", "I16", "I32", "I64")):
            continue
        block = GGML_QUANT_SIZES[qtype][0]
        try:
            quants.quantize(np.zeros((1, block), dtype=np.float32), qtype)
        except (NotImplementedError, quants.QuantError, ValueError, TypeError):
            continue
        names.append(qtype.name)
    bits = {n: 8 * GGML_QUANT_SIZES[T[n]][1] / GGML_QUANT_SIZES[T[n]][0] for n in names}
    return tuple(sorted(names, key=lambda n: (-bits[n], n)))


# Ternary types are for ternary models; on an ordinary embedding they say nothing useful.
SIMULATED_TYPES = tuple(n for n in _quantisable() if not n.startswith("TQ"))


GGML_TYPES = frozenset(T.__members__)


def bits_per_value(type_name: str) -> float:
    block, size = GGML_QUANT_SIZES[T[type_name]]
    return 8 * size / block
