"""GGUF (llama.cpp, Ollama, LM Studio): header, metadata and read-only memory-mapped tensors.

The header is parsed here with `struct` because `gguf.GGUFReader` builds a numpy object per
metadata item and takes 6–10 s on a 49k-token vocabulary; block sizes come from
`ggml_types` (the `gguf` package's table, without importing it), and quantised rows are decoded
with `gguf.quants` (see vectors.py).
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.errors import ModelFormatError
from explorer.core.model.dtypes import BF16
from explorer.core.model.formats import ggml_types
from explorer.core.model.formats.ggml_types import GGUF_MAGIC
from explorer.core.model.formats.gguf_strings import LONG, Layouts, StringArray

_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<part>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)
# value type → (struct code, size); 8 = string, 9 = array
_SCALARS = {
    0: ("B", 1),
    1: ("b", 1),
    2: ("H", 2),
    3: ("h", 2),
    4: ("I", 4),
    5: ("i", 4),
    6: ("f", 4),
    7: ("?", 1),
    10: ("Q", 8),
    11: ("q", 8),
    12: ("d", 8),
}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?"}
_NUMPY |= {10: "<u8", 11: "<i8", 12: "<f8"}
# Plain float types: the memory map holds the values themselves.
FLOAT_TYPES: dict[int, tuple[str, np.dtype]] = {
    ggml_types.F32: ("F32", np.dtype("<f4")),
    ggml_types.F16: ("F16", np.dtype("<f2")),
    ggml_types.BF16: ("BF16", BF16),
    ggml_types.F64: ("F64", np.dtype("<f8")),
}
MAX_ITEMS = 1 << 28  # more array items or tensors than this is not a real file


@dataclass(frozen=True)
class GGUFTensor:
    """Where one tensor of a GGUF file lies, and its GGML type."""

    name: str
    ggml_type: int
    shape: tuple[int, ...]  # numpy order: (rows, dim) for a matrix (GGUF stores it reversed)
    begin: int  # absolute byte offset in the file
    nbytes: int
    path: Path

    @property
    def type_name(self) -> str:
        if self.ggml_type in FLOAT_TYPES:
            return FLOAT_TYPES[self.ggml_type][0]
        known = ggml_types.lookup(self.ggml_type)
        return known[0] if known else f"type {self.ggml_type}"


class _Cursor:
    def __init__(
        self,
        data: bytes | memoryview,
        path: Path,
        skip_arrays: bool = False,
        layouts: Layouts | None = None,
    ):
        self.data = data
        self.pos = 0
        self.path = path
        self.skip_arrays = skip_arrays  # listing a model store: walk past big arrays, keep none
        self.layouts = layouts  # where long string arrays were found last time

    def fail(self, what: str) -> ModelFormatError:
        return ModelFormatError(f"{self.path.name}: not a valid GGUF file ({what})")

    def take(self, code: str, size: int):
        if self.pos + size > len(self.data):
            raise self.fail(f"header ends early at byte {self.pos}")
        (value,) = struct.unpack_from("<" + code, self.data, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        n = self.take("Q", 8)
        if self.pos + n > len(self.data):
            raise self.fail(f"a string of {n} bytes runs past the end of the file")
        raw = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, vtype: int):
        if vtype in _SCALARS:
            return self.take(*_SCALARS[vtype])
        if vtype == 8:
            return self.string()
        if vtype == 9:
            return self.array()
        raise self.fail(f"unknown metadata value type {vtype}")

    def array(self):
        item = self.take("I", 4)
        count = self.take("Q", 8)
        if count > MAX_ITEMS:
            raise self.fail(f"an array of {count} items")
        if item in _NUMPY:
            size = np.dtype(_NUMPY[item]).itemsize * count
            if self.pos + size > len(self.data):
                raise self.fail("an array runs past the end of the file")
            out = None
            if not self.skip_arrays:
                out = np.array(self.data[self.pos : self.pos + size]).view(_NUMPY[item])
            self.pos += size
            return out
        if item == 8:
            return self._strings(count)
        return [self.value(item) for _ in range(count)]

    def _strings(self, count: int) -> Sequence[str] | None:
        long = count >= LONG and self.layouts is not None and not self.skip_arrays
        if long:
            assert self.layouts is not None
            known = self.layouts.known(self.data, self.pos, count)
            if known is not None:
                self.pos += len(known.region)
                return known
        data, pos = self.data, self.pos
        starts: list[int] = []
        unpack = struct.Struct("<Q").unpack_from
        end = len(data)
        first = pos
        mark = starts.append
        for _ in range(count):
            if pos + 8 > end:
                raise self.fail("a string array runs past the end of the file")
            mark(pos)
            pos += 8 + unpack(data, pos)[0]
        if pos > end:
            raise self.fail("a string array runs past the end of the file")
        self.pos = pos
        if self.skip_arrays:
            return None
        region, at = bytes(data[first:pos]), np.array(starts, np.int64) - first
        if long:
            assert self.layouts is not None
            walked = StringArray(region, at)
            self.layouts.walked_array(first, walked)
            return walked
        return decode_strings(region, at)


def decode_strings(region: bytes, starts: np.ndarray) -> list[str]:
    """The strings of a GGUF string array (`region`: each one's 8-byte length, then its bytes;
    `starts`: where each length is), decoded at once: every length becomes eight NULs, the
    whole region is decoded in one call and split on them. An array whose strings hold NULs
    themselves is decoded one string at a time."""
    if not len(starts):
        return []
    raw = np.frombuffer(region, np.uint8)
    lengths = (starts[:, None] + np.arange(8)).reshape(-1)
    if np.count_nonzero(raw == 0) == np.count_nonzero(raw[lengths] == 0):  # no NUL in strings
        cleared = raw.copy()
        cleared[lengths] = 0
        out = cleared.tobytes().decode("utf-8", "replace").split("\0" * 8)[1:]
        if len(out) == len(starts):
            return out
    ends = np.append(starts[1:], len(region)).tolist()
    return [
        str(region[a + 8 : b], "utf-8", "replace")
        for a, b in zip(starts.tolist(), ends, strict=True)
    ]


@dataclass
class GGUFFile:
    """One .gguf file: metadata key → value, tensor name → GGUFTensor; data is never read here."""

    path: Path
    metadata: dict[str, object] = field(default_factory=dict)
    tensors: dict[str, GGUFTensor] = field(default_factory=dict)

    @classmethod
    def open(cls, path: str | Path, arrays: bool = True, cache_dir: Path | None = None) -> GGUFFile:
        """Parse the header through a read-only map (only its pages are read).

        arrays=False skips array values (the vocabulary): enough to list a model store. Long
        string arrays are found through the user cache (`cache_dir`) and decoded when first
        read (see gguf_strings).
        """
        path = Path(path)
        try:
            with open(path, "rb") as f:
                size = f.seek(0, 2)
                if size < 24:
                    raise ModelFormatError(f"{path.name}: not a valid GGUF file ({size} bytes)")
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as e:
            raise ModelFormatError(f"{path.name}: cannot read ({e.strerror})") from None
        view = memoryview(mapped)
        layouts = Layouts(path, cache_dir) if arrays else None
        try:
            parsed = cls._parse(path, _Cursor(view, path, not arrays, layouts), size)
            if layouts is not None:
                layouts.save()
            return parsed
        finally:
            view.release()
            mapped.close()

    @classmethod
    def _parse(cls, path: Path, c: _Cursor, data_size: int) -> GGUFFile:
        if c.take("I", 4) != GGUF_MAGIC:
            raise c.fail("no GGUF magic at the start")
        version = c.take("I", 4)
        if version not in (2, 3):
            if version & 0xFFFF == 0:
                raise c.fail("big-endian GGUF files are not supported")
            raise c.fail(f"version {version}; versions 2 and 3 are supported")
        n_tensors, n_kv = c.take("Q", 8), c.take("Q", 8)
        if n_tensors > MAX_ITEMS or n_kv > MAX_ITEMS:
            raise c.fail(f"{n_tensors} tensors and {n_kv} metadata items")
        out = cls(path)
        for _ in range(n_kv):
            key = c.string()
            if key in out.metadata:
                raise c.fail(f"metadata key {key!r} is given twice")
            out.metadata[key] = c.value(c.take("I", 4))
        infos = []
        for _ in range(n_tensors):
            name = c.string()
            n_dims = c.take("I", 4)
            if n_dims > 8:
                raise c.fail(f"tensor {name!r} has {n_dims} dimensions")
            dims = tuple(c.take("Q", 8) for _ in range(n_dims))
            infos.append((name, dims, c.take("I", 4), c.take("Q", 8)))
        align = out.metadata.get("general.alignment", 32)
        if not isinstance(align, int) or align <= 0 or align & (align - 1):
            raise c.fail(f"general.alignment {align!r} is not a power of two")
        start = -(-c.pos // align) * align
        for name, dims, ggml_type, offset in infos:
            out.tensors[name] = out._tensor(c, name, dims, ggml_type, start + offset, data_size)
        return out

    def _tensor(self, c: _Cursor, name, dims, ggml_type, begin, size) -> GGUFTensor:
        known = ggml_types.lookup(ggml_type)
        if known is None:
            raise c.fail(f"tensor {name!r} has unknown type {ggml_type}")
        _, block, type_size = known
        shape = tuple(reversed(dims))
        count = int(np.prod(dims, dtype=object)) if dims else 1
        if dims and dims[0] % block:
            raise c.fail(f"tensor {name!r}: row length {dims[0]} is not a multiple of {block}")
        nbytes = count // block * type_size
        if begin + nbytes > size:
            raise c.fail(f"tensor {name!r} runs past the end of the file")
        return GGUFTensor(name, ggml_type, shape, begin, nbytes, self.path)


def row_bytes(tensor: GGUFTensor) -> int:
    _, block, type_size = ggml_types.lookup(tensor.ggml_type)  # type: ignore[misc]
    return tensor.shape[-1] // block * type_size


def matrix(tensor: GGUFTensor) -> np.ndarray:
    """Read-only memory map of a 2-D tensor: float values, or raw blocks for quantised types.

    A quantised matrix is uint8 [rows, bytes per row] whose dtype carries the GGML type in its
    metadata, so a slice or a fancy-indexed copy still knows how to decode itself.
    """
    rows = tensor.shape[0]
    if tensor.ggml_type in FLOAT_TYPES:
        dtype = FLOAT_TYPES[tensor.ggml_type][1]
        shape = (rows, tensor.shape[1])
    else:
        dtype = np.dtype(np.uint8, metadata={"ggml_type": int(tensor.ggml_type)})
        shape = (rows, row_bytes(tensor))
    if rows == 0:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(tensor.path, dtype=dtype, mode="r", offset=tensor.begin, shape=shape)


def split_parts(path: Path) -> list[Path]:
    """All files of a split model (`name-00001-of-00003.gguf`), or just `path`."""
    m = _SPLIT.match(path.name)
    if not m:
        return [path]
    part, count = int(m.group("part")), int(m.group("count"))
    if not 1 <= part <= count:
        raise ModelFormatError(f"{path.name}: not a valid split name (part {part} of {count})")
    stem = m.group("stem")
    parts = [path.with_name(f"{stem}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        raise ModelFormatError(f"{path.name}: split model part {missing[0]} is missing")
    return parts


def open_parts(path: Path) -> tuple[list[GGUFFile], dict[str, GGUFTensor]]:
    """Parse every part of a (possibly split) model; metadata lives in the first part."""
    files = [GGUFFile.open(p) for p in split_parts(path)]
    tensors: dict[str, GGUFTensor] = {}
    for f in files:
        tensors.update(f.tensors)
    return files, tensors
