"""On-disk caches of results computed from a model file, checked before they are trusted.

A cache entry is one folder: ``.npy`` arrays and ``meta.json``. The meta holds the format
version, the key (kind, parameters and the identity of the model file: path, size, mtime and a
hash of its first and last blocks) and, for every array, its dtype, shape and SHA-256. An
entry is written in a temporary folder and published with one rename, so a crash or a full
disk leaves no half-written entry. On load every file must be a regular file of the size its
shape allows, every array must have the dtype and shape the caller expects, match its
checksum and, where the caller says so, hold only finite values; anything off and `load`
returns no arrays and the reason, so the caller computes again and says so in one line.
Pickles are never loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.filecheck import open_regular, read_limited

APP_NAME = "embedding-explorer"
FORMAT = 2  # 2: checksummed arrays, model file identity with first and last blocks
MAX_META_BYTES = 4 << 20
_SAMPLE_BYTES = 1 << 20  # hashed from the start of the model file (and the header, if longer)
_TAIL_BYTES = 64 << 10  # hashed from its end
_MAX_HEADER_BYTES = 100 << 20
_NPY_HEADER_BYTES = 64 << 10
_CHUNK = 8 << 20


def default_cache_dir() -> Path:
    if sys.platform == "linux":  # platformdirs' answer, without its import (a one-row command's)
        base = os.environ.get("XDG_CACHE_HOME", "")
        return Path(base if base.strip() else os.path.expanduser("~/.cache")) / APP_NAME
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP_NAME))


def tensor_file(model) -> Path:
    """The file that holds the embedding tensor (the right shard of a sharded model)."""
    name = getattr(model.matrix, "filename", None)
    return Path(name) if name else Path(model.files[0])


def _sample_hash(path: Path) -> str:
    """SHA-256 of the file's first block (all of a safetensors header) and its last block."""
    h = hashlib.sha256()
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        first = n + 8 if n + 8 <= min(size, _MAX_HEADER_BYTES) else _SAMPLE_BYTES
        h.update(head + f.read(max(0, min(size, max(first, _SAMPLE_BYTES)) - 8)))
        if size > _SAMPLE_BYTES:
            f.seek(max(0, size - _TAIL_BYTES))
            h.update(f.read(_TAIL_BYTES))
    return h.hexdigest()


def file_key(model, kind: str, params: dict) -> dict:
    """Everything that must match for a cached result to belong to this exact tensor."""
    path = tensor_file(model).resolve()
    st = path.stat()
    return {
        "kind": kind,
        "file": str(path),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "tensor": model.tensor,
        "sample_sha256": _sample_hash(path),
        "rows": int(model.rows),
        "dim": int(model.dim),
        "dtype": model.dtype,
        "params": params,
    }


def key_dir(root: Path, key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return root / key["kind"] / digest


def read_meta(folder: Path) -> dict | None:
    """The entry's meta.json as a dict; None if absent, not a regular file, too big or bad."""
    try:
        data = json.loads(read_limited(folder / "meta.json", MAX_META_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError, ExplorerError):
        return None
    return data if isinstance(data, dict) else None


# -- writing ------------------------------------------------------------------------------------


def _file_sha256(f) -> str:
    h = hashlib.sha256()
    left = os.fstat(f.fileno()).st_size - f.tell()
    buf = bytearray(max(1, min(_CHUNK, left)))  # a small entry: no 8 MB buffer to clear
    view = memoryview(buf)
    while n := f.readinto(buf):
        h.update(view[:n])
    return h.hexdigest()


def _describe(path: Path) -> dict:
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    with open_regular(path) as f:
        digest = _file_sha256(f)
    return {"dtype": arr.dtype.str, "shape": list(arr.shape), "sha256": digest}


def publish(tmp: Path, final: Path, key: dict, extra: dict | None = None) -> None:
    """Make a fully written temporary folder of ``.npy`` files the cache entry `final`: its
    meta records each array's dtype, shape and checksum. Stale entries of the file go."""
    arrays = {p.stem: _describe(p) for p in sorted(tmp.glob("*.npy"))}
    meta = {"format": FORMAT, "key": key, "arrays": arrays, "extra": extra or {}}
    (tmp / "meta.json").write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
    if final.is_symlink() or final.exists():
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final, ignore_errors=True)
        else:
            final.unlink(missing_ok=True)
    os.replace(tmp, final)
    for other in final.parent.iterdir():
        if other == final or other.is_symlink() or not other.is_dir():
            continue
        meta_other = read_meta(other)
        key_other = meta_other.get("key") if meta_other else None
        if isinstance(key_other, dict) and key_other.get("file") == key["file"]:
            shutil.rmtree(other, ignore_errors=True)


def save(root: Path, key: dict, arrays: dict[str, np.ndarray], extra: dict | None = None) -> bool:
    """Write `arrays` as the entry of `key` (atomically); False if the cache is not writable."""
    import tempfile

    try:
        final = key_dir(Path(root), key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
        try:
            for name, arr in arrays.items():
                np.save(tmp / f"{name}.npy", np.asarray(arr), allow_pickle=False)
            publish(tmp, final, key, extra)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return True
    except OSError:
        return False


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArraySpec:
    """What an array of an entry must be: dtype, shape (None: any length) and finiteness."""

    dtype: str
    shape: tuple[int | None, ...]
    finite: bool = False
    mapped: bool = False  # memory-map it (large arrays) instead of reading it into memory
    max_items: int = 1 << 26  # bound for dimensions given as None


@dataclass
class Loaded:
    """A cache entry's arrays and the extra facts stored with them."""

    arrays: dict[str, np.ndarray]
    extra: dict = field(default_factory=dict)


class CacheInvalid(Exception):
    """An entry that exists but must not be used; the message says why."""


def _read_array(path: Path, spec: ArraySpec, recorded: object) -> np.ndarray:
    if not isinstance(recorded, dict):
        raise CacheInvalid(f"{path.name} is not described in meta.json")
    want = np.dtype(spec.dtype)
    try:
        f = open_regular(path)
    except ExplorerError as e:
        raise CacheInvalid(str(e)) from None
    with f:
        size = os.fstat(f.fileno()).st_size
        known = [d for d in spec.shape if d is not None]
        free = spec.max_items if None in spec.shape else 1
        limit = int(np.prod(known, dtype=np.float64) * free) * want.itemsize + _NPY_HEADER_BYTES
        if size > limit:
            raise CacheInvalid(f"{path.name} is {size:,} bytes, more than its shape allows")
        digest = _file_sha256(f)
        if digest != recorded.get("sha256"):
            raise CacheInvalid(f"{path.name} does not match its checksum")
        f.seek(0)
        try:
            version = np.lib.format.read_magic(f)
            read_header = {
                (1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0,
            }.get(version)
            if read_header is None:
                raise ValueError(f"format version {version}")
            shape, fortran, dtype = read_header(f)
        except (ValueError, SyntaxError, TypeError, OSError) as e:
            raise CacheInvalid(f"{path.name}: not a valid .npy file ({e})") from None
        if dtype != want or fortran:
            raise CacheInvalid(f"{path.name} holds {dtype}, expected {want}")
        if len(shape) != len(spec.shape) or any(
            w is not None and s != w for s, w in zip(shape, spec.shape, strict=False)
        ):
            raise CacheInvalid(f"{path.name} has shape {shape}, expected {spec.shape}")
        offset = f.tell()
        nbytes = int(np.prod(shape, dtype=np.int64)) * want.itemsize
        if size != offset + nbytes:
            need = offset + nbytes
            raise CacheInvalid(f"{path.name} is {size:,} bytes, its shape needs {need:,}")
        arr: np.ndarray
        if spec.mapped and nbytes:
            arr = np.memmap(f, dtype=want, mode="r", offset=offset, shape=shape)
        else:
            data = bytearray(nbytes)
            if f.readinto(data) != nbytes:  # type: ignore[attr-defined]
                raise CacheInvalid(f"{path.name} is shorter than its shape")
            arr = np.frombuffer(data, dtype=want).reshape(shape)
    if spec.finite and arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise CacheInvalid(f"{path.name} holds NaN or infinite values")
    return arr


def load(root: Path, key: dict, specs: dict[str, ArraySpec]) -> tuple[Loaded | None, str]:
    """The entry of `key` if it exists and passes every check; else (None, why) where `why`
    is empty when there simply is no entry."""
    folder = key_dir(Path(root), key)
    if not os.path.lexists(folder):
        return None, ""
    meta = read_meta(folder)
    if meta is None:
        return None, "its meta.json is missing or unreadable"
    if meta.get("format") != FORMAT:
        return None, f"it was written in another cache format ({meta.get('format')!r})"
    if meta.get("key") != key:
        return None, "it belongs to another file or settings"
    recorded = meta.get("arrays")
    extra = meta.get("extra")
    if not isinstance(recorded, dict) or not isinstance(extra, dict):
        return None, "its meta.json is malformed"
    try:
        arrays = {
            name: _read_array(folder / f"{name}.npy", spec, recorded.get(name))
            for name, spec in specs.items()
        }
    except CacheInvalid as e:
        return None, str(e)
    except (OSError, ValueError, MemoryError) as e:
        return None, f"it cannot be read ({e})"
    return Loaded(arrays, extra), ""


def rejected(what: str, why: str) -> str:
    """The one status line for a cache entry that was found but not used."""
    return f"the cached {what} was not used ({why}); computing it again"


def sentence(note: str) -> str:
    """A note as a status line: first letter capitalised, the rest as written."""
    return note[:1].upper() + note[1:]
