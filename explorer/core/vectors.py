"""Row decoding per stored dtype, exact bit fields, and row statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (exponent bits, mantissa bits) of the dtypes whose bit fields we explain.
BIT_LAYOUTS: dict[str, tuple[int, int]] = {
    "F64": (11, 52),
    "F32": (8, 23),
    "F16": (5, 10),
    "BF16": (8, 7),
    "F8_E4M3": (4, 3),
    "F8_E5M2": (5, 2),
}


def decode_rows(raw: np.ndarray) -> np.ndarray:
    """Exact conversion of stored values: every bf16/f16/f8 value is representable in float32."""
    if raw.dtype == np.float64:
        return np.array(raw, dtype=np.float64)
    return raw.astype(np.float32)


@dataclass(frozen=True)
class Bits:
    hex: str
    sign: int
    exponent: int
    mantissa: int
    binary: str  # "s eeeeeeee mmmmmmm"


def bit_fields(raw: np.ndarray, dtype: str) -> list[Bits]:
    """Hex and sign/exponent/mantissa fields of each stored value of a 1-D raw row."""
    exp_bits, man_bits = BIT_LAYOUTS[dtype]
    width = 1 + exp_bits + man_bits
    uint = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    words = np.ascontiguousarray(raw).view(uint).astype(np.uint64)
    digits = width // 4
    out = []
    for w in words.tolist():
        sign = w >> (width - 1)
        exponent = (w >> man_bits) & ((1 << exp_bits) - 1)
        mantissa = w & ((1 << man_bits) - 1)
        b = format(w, f"0{width}b")
        out.append(
            Bits(
                f"0x{w:0{digits}X}",
                sign,
                exponent,
                mantissa,
                f"{b[0]} {b[1 : 1 + exp_bits]} {b[1 + exp_bits :]}",
            )
        )
    return out


@dataclass(frozen=True)
class RowStats:
    norm: float
    mean: float
    std: float
    min: float
    max: float
    argmax_abs: int
    finite: bool

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def row_stats(values: np.ndarray) -> RowStats:
    v = np.asarray(values, dtype=np.float64)
    finite = bool(np.isfinite(v).all())
    if v.size == 0:
        return RowStats(0.0, 0.0, 0.0, 0.0, 0.0, -1, finite)
    with np.errstate(invalid="ignore", over="ignore"):  # inf/NaN rows give inf/NaN stats
        return _stats(v, finite)


def _stats(v: np.ndarray, finite: bool) -> RowStats:
    return RowStats(
        norm=float(np.linalg.norm(v)),
        mean=float(v.mean()),
        std=float(v.std()),
        min=float(v.min()),
        max=float(v.max()),
        argmax_abs=int(np.nanargmax(np.abs(v))) if not np.isnan(v).all() else -1,
        finite=finite,
    )


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarities of a few rows; zero rows give 0."""
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    unit = np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)
    return unit @ unit.T


def near_square(n: int) -> tuple[int, int]:
    """(rows, cols) with rows*cols >= n, as square as possible, for a heatmap of one row."""
    cols = int(np.ceil(np.sqrt(n)))
    for c in range(cols, 0, -1):
        if n % c == 0 and n // c <= 2 * c:
            return n // c, c
    return int(np.ceil(n / cols)), cols
