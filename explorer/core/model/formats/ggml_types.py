"""GGML tensor types by id: name, values per block and bytes per block.

Opening a GGUF file needs only these three facts per type; the `gguf` package holds them too,
but importing it loads its writer, reader and YAML metadata as well (about as long as numpy's
own import), which a command that reads one row should not pay. A type missing here is looked
up in `gguf` (tests/core/test_ggml_types.py checks this table against it).
"""

from __future__ import annotations

GGUF_MAGIC = 0x46554747  # b"GGUF" read as a little-endian uint32

# id: (name, values per block, bytes per block), as gguf.constants.GGML_QUANT_SIZES has them
TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 40),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
}
F32, F16, F64, BF16 = 0, 1, 28, 30


def _from_gguf(type_id: int) -> tuple[str, int, int] | None:
    """A type this table does not know, from the installed `gguf` package (newer types)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        kind = GGMLQuantizationType(type_id)
        block, size = GGML_QUANT_SIZES[kind]
    except (ValueError, KeyError):
        return None
    return kind.name, block, size


def lookup(type_id: int) -> tuple[str, int, int] | None:
    """(name, values per block, bytes per block) of a GGML type id; None if no one knows it."""
    return TYPES.get(type_id) or _from_gguf(type_id)
