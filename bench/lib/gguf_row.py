"""The floor for opening a GGUF: a bare script that walks the header (every metadata value,
string arrays included) with `struct`, maps token_embd.weight and decodes one Q8_0 row.

    python bench/lib/gguf_row.py MODEL.gguf [ROW]
"""

from __future__ import annotations

import mmap
import struct
import sys

import numpy as np

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
Q8_0 = 8


def main(path: str, row: int) -> None:
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    u32, u64 = struct.Struct("<I").unpack_from, struct.Struct("<Q").unpack_from
    pos = 8
    (n_tensors,), (n_kv,) = u64(data, pos), u64(data, pos + 8)
    pos += 16

    def skip(vtype: int, pos: int) -> int:
        if vtype in SIZES:
            return pos + SIZES[vtype]
        if vtype == 8:
            return pos + 8 + u64(data, pos)[0]
        (item,), (count,) = u32(data, pos), u64(data, pos + 4)
        pos += 12
        if item in SIZES:
            return pos + SIZES[item] * count
        for _ in range(count):
            pos = skip(item, pos)
        return pos

    for _ in range(n_kv):
        pos += 8 + u64(data, pos)[0]
        (vtype,) = u32(data, pos)
        pos = skip(vtype, pos + 4)
    where = {}
    for _ in range(n_tensors):
        (n,) = u64(data, pos)
        name = bytes(data[pos + 8 : pos + 8 + n]).decode()
        pos += 8 + n
        (nd,) = u32(data, pos)
        dims = struct.unpack_from(f"<{nd}Q", data, pos + 4)
        pos += 4 + 8 * nd
        (ttype,), (offset,) = u32(data, pos), u64(data, pos + 4)
        pos += 12
        where[name] = (dims, ttype, offset)
    start = -(-pos // 32) * 32
    dims, ttype, offset = where["token_embd.weight"]
    assert ttype == Q8_0
    dim, rows = dims
    row_bytes = dim // 32 * 34
    blocks = np.frombuffer(data, np.uint8, row_bytes, start + offset + row * row_bytes)
    blocks = blocks.reshape(-1, 34)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    values = (blocks[:, 2:].copy().view(np.int8) * scale).reshape(-1)
    print(rows, dim, float(values[:4].sum()))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
