"""The exact bits of a stored value: sign, exponent and mantissa fields, and GGUF quant blocks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.model.decode import ggml_type

# (exponent bits, mantissa bits) of the dtypes whose bit fields we explain.
BIT_LAYOUTS: dict[str, tuple[int, int]] = {
    "F64": (11, 52),
    "F32": (8, 23),
    "F16": (5, 10),
    "BF16": (8, 7),
    "F8_E4M3": (4, 3),
    "F8_E5M2": (5, 2),
}


@dataclass(frozen=True)
class QuantBlocks:
    """What a quantised row stores: per block a scale (and a minimum), and integer quants.

    value[b, i] == scale[b] * quants[b, i] + (minimum[b] if minimum is not None else 0),
    computed in float32 exactly as the decoder does.
    """

    type_name: str
    block_size: int
    block_bytes: int
    scale: np.ndarray  # float32 [blocks]
    minimum: np.ndarray | None  # float32 [blocks] for the *_1 types
    quants: np.ndarray  # int16 [blocks, block_size]
    quant_bits: int

    @property
    def bits_per_value(self) -> float:
        return 8 * self.block_bytes / self.block_size


def quant_blocks(raw_row: np.ndarray) -> QuantBlocks | None:
    """Scales and integer quants of one raw quantised row (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1).

    None for float rows and for block layouts with nested scales (K and IQ types).
    """
    qtype = ggml_type(raw_row)
    if qtype is None:
        return None
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    kind = GGMLQuantizationType(qtype)
    block_size, block_bytes = GGML_QUANT_SIZES[kind]
    layout = _LEGACY.get(kind.name)
    if layout is None:
        return None
    has_min, bits, offset = layout
    blocks = np.ascontiguousarray(raw_row).view(np.uint8).reshape(-1, block_bytes)
    scale = blocks[:, 0:2].copy().view(np.float16)[:, 0].astype(np.float32)
    pos = 2
    minimum = None
    if has_min:
        minimum = blocks[:, 2:4].copy().view(np.float16)[:, 0].astype(np.float32)
        pos = 4
    if bits == 8:
        q = blocks[:, pos:].view(np.int8).astype(np.int16)
    else:
        high = None
        if bits == 5:
            qh = blocks[:, pos : pos + 4].copy().view("<u4")[:, 0]
            high = ((qh[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int16)
            pos += 4
        qs = blocks[:, pos:]
        low = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int16)
        q = low if high is None else low | (high << 4)
        q = q - offset
    return QuantBlocks(kind.name, block_size, block_bytes, scale, minimum, q, bits)


# type → (has a minimum, bits per quant, offset subtracted from the stored unsigned quant)
_LEGACY = {
    "Q8_0": (False, 8, 0),
    "Q4_0": (False, 4, 8),
    "Q4_1": (True, 4, 0),
    "Q5_0": (False, 5, 16),
    "Q5_1": (True, 5, 0),
}


@dataclass(frozen=True)
class Bits:
    hex: str
    sign: int
    exponent: int
    mantissa: int
    binary: str  # "s eeeeeeee mmmmmmm"


class BitFields:
    """Sign, exponent and mantissa of every stored value of a 1-D raw row, split with numpy
    shifts (cheap for any d_model); the strings are made per value, only when asked for."""

    def __init__(self, raw: np.ndarray, dtype: str):
        self.dtype = dtype
        self.exp_bits, self.man_bits = BIT_LAYOUTS[dtype]
        self.width = 1 + self.exp_bits + self.man_bits
        self.bias = (1 << (self.exp_bits - 1)) - 1
        words = np.ascontiguousarray(raw).view(_UINT[self.width]).astype(np.uint64)
        self.words = words
        self.sign = (words >> np.uint64(self.width - 1)).astype(np.int64)
        self.exponent = (
            (words >> np.uint64(self.man_bits)) & np.uint64((1 << self.exp_bits) - 1)
        ).astype(np.int64)
        self.mantissa = (words & np.uint64((1 << self.man_bits) - 1)).astype(np.int64)

    def __len__(self) -> int:
        return len(self.words)

    def hex(self, i: int) -> str:
        return f"0x{int(self.words[i]):0{self.width // 4}X}"

    def binary(self, i: int) -> str:
        """'s eeeeeeee mmmmmmm'"""
        b = format(int(self.words[i]), f"0{self.width}b")
        return f"{b[0]} {b[1 : 1 + self.exp_bits]} {b[1 + self.exp_bits :]}"

    def bits(self, i: int) -> Bits:
        return Bits(
            self.hex(i),
            int(self.sign[i]),
            int(self.exponent[i]),
            int(self.mantissa[i]),
            self.binary(i),
        )

    def meaning(self, i: int) -> str:
        """How the three fields make the value, e.g. '+1 × 2^−5 × (1 + 5/128)'."""
        s, e, m = int(self.sign[i]), int(self.exponent[i]), int(self.mantissa[i])
        top, frac = (1 << self.exp_bits) - 1, 1 << self.man_bits
        sign = "−" if s else "+"
        if self.dtype == "F8_E4M3":  # e4m3fn: no infinities, only S.1111.111 is NaN
            if e == top and m == frac - 1:
                return "NaN (exponent and mantissa all ones)"
        elif e == top:
            return (
                f"{sign}infinity (exponent all ones, mantissa 0)"
                if m == 0
                else "NaN (exponent all ones)"
            )
        if e == 0:
            if m == 0:
                return f"{sign}0 (exponent and mantissa 0)"
            return f"{sign}1 × 2^{_minus(1 - self.bias)} × ({m}/{frac})  — subnormal"
        return f"{sign}1 × 2^{_minus(e - self.bias)} × (1 + {m}/{frac})"


_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _minus(n: int) -> str:
    return str(n).replace("-", "−")


def bit_fields(raw: np.ndarray, dtype: str) -> list[Bits]:
    """Hex and sign/exponent/mantissa fields of each stored value of a 1-D raw row."""
    fields = BitFields(raw, dtype)
    return [fields.bits(i) for i in range(len(fields))]
