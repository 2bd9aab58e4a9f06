"""A validating safetensors header parser with read-only memory-mapped tensor access.

We parse the header ourselves: the `safetensors` numpy framework cannot read BF16 without
`ml_dtypes` (slow to import) and would read whole tensors; here only the requested rows are
ever touched. The library still validates the header (it reads no tensor, so BF16 needs nothing).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ModelFormatError
from explorer.core.filecheck import FileStamp, open_regular
from explorer.core.model.dtypes import FLOAT_NAMES, ITEMSIZES, numpy_dtype, stored_name

# Header bigger than this is not a real model header (real ones are a few MB at most).
MAX_HEADER_BYTES = 100 * 1024 * 1024

FLOAT_DTYPES = FLOAT_NAMES


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _short(value: object, limit: int = 60) -> str:
    """repr for an error message, cut short: a hostile header must not flood the terminal."""
    return _cut(repr(value), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in a safetensors header."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int  # absolute byte offset in the file
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.begin


class SafetensorsFile:
    """One .safetensors file: validated header, lazily memory-mapped tensors (read-only)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.tensors: dict[str, TensorInfo] = {}
        self.metadata: dict[str, str] = {}
        self._maps: dict[str, np.ndarray] = {}
        self._parse()

    def _fail(self, what: str) -> ModelFormatError:
        return ModelFormatError(f"{self.path.name}: {what}")

    def _parse(self) -> None:
        with open_regular(self.path) as f:  # refuses FIFOs and devices before any read
            self.stamp = FileStamp.of_fd(self.path, f.fileno())
            file_size = self.stamp.size
            try:
                head = f.read(8)
                if len(head) < 8:
                    raise self._fail(
                        f"file is {file_size} bytes, too short for a safetensors header"
                    )
                (n,) = struct.unpack("<Q", head)
                if n > file_size - 8:
                    raise self._fail(
                        f"header length {n} exceeds file size {_size(file_size)} "
                        "(truncated or not safetensors)"
                    )
                if n > MAX_HEADER_BYTES:
                    raise self._fail(
                        f"header length {_size(n)} exceeds the {_size(MAX_HEADER_BYTES)} cap"
                    )
                raw = f.read(n)
            except OSError as e:
                raise self._fail(f"cannot read ({e.strerror or e})") from None
        if len(raw) < n:
            raise self._fail("file shrank while its header was read")
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            # ValueError covers JSONDecodeError and integers too long to convert
            raise self._fail(f"header is not valid JSON ({_cut(str(e), 120)})") from None
        if not isinstance(header, dict):
            raise self._fail("header is not a JSON object")
        data_start = 8 + n
        data_len = file_size - data_start
        spans = []
        for name, entry in header.items():
            if name == "__metadata__":
                if isinstance(entry, dict):
                    self.metadata = {str(k): str(v) for k, v in entry.items()}
                continue
            info = self._tensor_info(name, entry, data_start, data_len)
            self.tensors[name] = info
            if info.nbytes:
                spans.append((info.begin - data_start, info.end - data_start, name))
        self._check_coverage(sorted(spans), data_len)
        self._check_with_reference()

    def _check_coverage(self, spans: list[tuple[int, int, str]], data_len: int) -> None:
        """Tensors must tile the data section exactly: no overlap, no gap, no trailing bytes.

        The reference library refuses all three; a header length that is one byte off shows up
        here as a gap or a trailing byte instead of rows silently read one byte out of place.
        """
        pos, last = 0, None
        for begin, end, name in spans:
            if begin < pos:
                raise self._fail(f"tensors {_short(last)} and {_short(name)} overlap")
            if begin > pos:
                raise self._fail(
                    f"{begin - pos} bytes before tensor {_short(name)} belong to no tensor "
                    "(a gap in the data section, or a wrong header length)"
                )
            pos, last = end, name
        if pos != data_len:
            raise self._fail(
                f"{data_len - pos} bytes after the last tensor belong to no tensor "
                "(trailing data, or a wrong header length)"
            )

    def _check_with_reference(self) -> None:
        """Everything else the reference `safetensors` library refuses, we refuse too."""
        from safetensors import safe_open  # a GGUF or word-vector open never needs it

        try:
            with safe_open(self.path, framework="numpy"):
                pass
        except Exception as e:  # the library raises its own SafetensorError and OSError
            first = (str(e).splitlines() or [type(e).__name__])[0]
            raise self._fail(f"rejected by the safetensors library ({_cut(first, 160)})") from None

    def _tensor_info(self, name: str, entry: object, data_start: int, data_len: int) -> TensorInfo:
        what = f"tensor {_short(name)}"
        if not isinstance(entry, dict):
            raise self._fail(f"{what}: header entry is not an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(dtype, str) or dtype not in ITEMSIZES:
            raise self._fail(f"{what}: unknown dtype {_short(dtype)}")
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in shape
        ):
            raise self._fail(
                f"{what}: shape {_short(shape)} is not a list of non-negative integers"
            )
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(
                isinstance(o, int) and not isinstance(o, bool) and 0 <= o < 2**63 for o in offsets
            )
            or offsets[0] > offsets[1]
        ):
            raise self._fail(f"{what}: data_offsets {_short(offsets)} are not [begin, end]")
        if offsets[1] > data_len:
            raise self._fail(
                f"{what}: data ends at byte {offsets[1]} but the data section is only "
                f"{data_len} bytes (file truncated?)"
            )
        expected = math.prod(shape) * ITEMSIZES[dtype]
        if expected != offsets[1] - offsets[0]:
            raise self._fail(
                f"{what}: shape {_short(shape)} × {dtype} needs {_short(expected)} bytes "
                f"but data_offsets span {offsets[1] - offsets[0]}"
            )
        return TensorInfo(
            name, dtype, tuple(shape), data_start + offsets[0], data_start + offsets[1]
        )

    def array(self, name: str) -> np.ndarray:
        """The tensor as a read-only memory map in its stored dtype (nothing is read yet)."""
        if name not in self._maps:
            info = self.tensors[name]
            dtype = numpy_dtype(info.dtype)
            if info.nbytes == 0:
                arr = np.zeros(info.shape, dtype=dtype)
            else:
                arr = np.memmap(
                    self.path, mode="r", dtype=dtype, offset=info.begin, shape=info.shape
                )
            self._maps[name] = arr
        return self._maps[name]

    def close(self) -> None:
        for arr in self._maps.values():
            mm = getattr(arr, "_mmap", None)
            if mm is not None:
                try:
                    mm.close()
                except (BufferError, ValueError):
                    pass  # still referenced elsewhere; the GC will unmap it
        self._maps.clear()


@dataclass(frozen=True)
class RowBlocks:
    """A tensor to write block by block, so that it is never in memory whole: its dtype and
    shape, then its rows as consecutive arrays."""

    dtype: np.dtype
    shape: tuple[int, ...]
    blocks: Iterable[np.ndarray]


def write_safetensors(
    path: str | Path,
    tensors: Mapping[str, np.ndarray | RowBlocks],
    metadata: dict[str, str] | None = None,
) -> None:
    """Write arrays (any stored dtype: tagged BF16 bits, ml_dtypes' bf16/f8 too) as a
    .safetensors file; a tensor given as RowBlocks is written one block at a time."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = metadata
    sizes: dict[str, int] = {}
    offset = 0
    for name, arr in tensors.items():
        sizes[name] = math.prod(arr.shape) * np.dtype(arr.dtype).itemsize
        header[name] = {
            "dtype": stored_name(arr.dtype),
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + sizes[name]],
        }
        offset += sizes[name]
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # align the data section as the reference writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for name, arr in tensors.items():
            written = 0
            for block in arr.blocks if isinstance(arr, RowBlocks) else (arr,):
                if stored_name(block.dtype) != stored_name(arr.dtype):
                    raise ValueError(f"{name}: a block of {block.dtype}, not {arr.dtype}")
                if block.dtype.byteorder == ">":  # safetensors is little-endian
                    block = block.astype(block.dtype.newbyteorder("<"))
                written += f.write(np.ascontiguousarray(block).tobytes())
            if written != sizes[name]:
                raise ValueError(f"{name}: its blocks hold {written} bytes, not {sizes[name]}")
