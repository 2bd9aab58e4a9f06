"""Stored element types as numpy dtypes, without `ml_dtypes` for BF16 and F16.

BF16 is the high half of a float32, so its rows stay uint16 bits in memory, tagged in the
dtype's metadata (a slice or a fancy-indexed copy keeps the tag), and widen to float32 with a
16-bit shift. `ml_dtypes` takes up to 2 s to import, so it is loaded only for the F8 types.
"""

from __future__ import annotations

import numpy as np

BF16 = np.dtype(np.uint16, metadata={"stored": "BF16"})
_ML_DTYPES_NAMES = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}
_PLAIN: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": BF16,
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}
# Bytes per value of every safetensors dtype, to validate a header without building dtypes.
ITEMSIZES: dict[str, int] = {name: dt.itemsize for name, dt in _PLAIN.items()}
ITEMSIZES |= {"F8_E4M3": 1, "F8_E5M2": 1}
FLOAT_NAMES = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2")


def numpy_dtype(name: str) -> np.dtype:
    """The dtype a tensor of safetensors dtype `name` is mapped with (F8 imports ml_dtypes)."""
    if name in _PLAIN:
        return _PLAIN[name]
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, _ML_DTYPES_NAMES[name]))


def is_bf16(dtype: np.dtype) -> bool:
    """True for BF16 bits as mapped here, and for ml_dtypes' bfloat16 (arrays users hand in)."""
    meta = dtype.metadata
    return bool(meta and meta.get("stored") == "BF16") or dtype.name == "bfloat16"


def stored_name(dtype: np.dtype) -> str:
    """The safetensors name of a numpy dtype (tagged BF16 or ml_dtypes' bf16/f8 included)."""
    dtype = np.dtype(dtype)
    if is_bf16(dtype):
        return "BF16"
    for name, ml_name in _ML_DTYPES_NAMES.items():
        if dtype.name == ml_name:
            return name
    if dtype.byteorder == ">":
        dtype = dtype.newbyteorder("<")
    for name, dt in _PLAIN.items():
        if dt == dtype and name != "BF16":
            return name
    raise ValueError(f"no safetensors dtype for numpy {dtype}")


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """Exact float32 values of BF16 bits (any shape): the bits become a float32's high half."""
    out = np.left_shift(np.asarray(bits).view(np.uint16), np.uint32(16), dtype=np.uint32)
    return out.view(np.float32)
