"""Where a model's pieces are: the files behind a path, its config, and the embedding tensor's
name and shape from the headers (nothing of the matrix is read here)."""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from explorer.core.errors import ModelFormatError, PickleRefusedError
from explorer.core.filecheck import check_regular, open_regular
from explorer.core.model.formats.jsonfile import load_json
from explorer.core.model.formats.safetensors import FLOAT_DTYPES, SafetensorsFile, TensorInfo
from explorer.core.model.tensors import find_embedding

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")
# What opens, for help texts and errors.
MODEL_KINDS = (
    "a model folder, .safetensors, .safetensors.index.json or .gguf file, or word vectors "
    "(.txt/.vec text, word2vec .bin, .npy with a word list)"
)
DEMO = "demo"  # the name of the built-in demo model, wherever a model path is asked for


def _pickle_message(path: Path) -> str:
    return (
        f"{path.name} is a pickle checkpoint; pickle files can run arbitrary code, so Embedding "
        "Explorer never opens them. Convert it to safetensors first, e.g. "
        "`safetensors.torch.save_file(torch.load(path, weights_only=True), 'model.safetensors')`."
    )


def _ctranslate2_spec(head: bytes) -> str | None:
    """The model spec's name if `head` starts like CTranslate2's model.bin (faster-whisper,
    CTranslate2 converters): a small binary version, then the spec's name as a short string."""
    if len(head) < 8:
        return None
    version, length = struct.unpack_from("<IH", head)
    name = head[6 : 6 + length]
    if not 1 <= version <= 64 or not 2 <= length <= 128 or len(name) != length:
        return None
    text = name[:-1]
    if name[-1:] != b"\0" or not text.isascii() or not text.replace(b"_", b"").isalnum():
        return None
    return text.decode("ascii")


def refuse_checkpoint(path: Path) -> NoReturn:
    """The error for a .bin/.pt/.pth/.ckpt file, named by what its first bytes show it to be."""
    try:
        with open_regular(path) as f:
            head = f.read(256)
    except ModelFormatError:
        head = b""
    spec = _ctranslate2_spec(head)
    if spec is not None:
        raise ModelFormatError(
            f"{path.name} is a CTranslate2 model ({spec}, as faster-whisper uses), not a PyTorch "
            "checkpoint; neither Embedding Explorer nor torch.load reads it. Open the original "
            "model's safetensors instead (the Hugging Face repository it was converted from)."
        )
    if head[:4] == b"PK\x03\x04" or head[:1] == b"\x80" or not head:
        raise PickleRefusedError(_pickle_message(path))
    raise ModelFormatError(
        f"{path.name}: not a model file Embedding Explorer reads (neither a pickle checkpoint, "
        "safetensors nor GGUF)"
    )


def expand(path: str | Path) -> Path:
    """The path to open: `~` expanded; `demo` (when no such file is here) is the built-in demo;
    a cached Hugging Face repo id or an Ollama model name that is not a path resolves to its
    files."""
    found = Path(path).expanduser()
    if not found.exists() and str(path) == DEMO:
        from explorer.core.resources import demo_model_dir

        return demo_model_dir()
    if not found.exists():
        from explorer.core.model.stores import resolve

        found = resolve(str(found)) or found
    return found


def word_vectors_in(path: Path) -> str | None:
    """The word-vector format of `path` (formats.wordvec.kind_of), None for a folder, a GGUF or
    a safetensors file without loading the word-vector reader."""
    if path.suffix.lower() in (".gguf", ".safetensors", ".json") or not path.is_file():
        return None
    from explorer.core.model.formats.wordvec import kind_of

    return kind_of(path)


def gguf_in(path: Path) -> Path | None:
    """The .gguf file to open for `path` (a .gguf file, or a folder holding only GGUF weights)."""
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path
    if path.is_file() and not path.suffix:  # an Ollama blob: sha256-…, no suffix
        with open_regular(path) as f:
            if f.read(4) == b"GGUF":
                return path
    if (
        path.is_dir()
        and not any(path.glob("*.safetensors"))
        and not any(path.glob("*.safetensors.index.json"))
    ):
        found = sorted(p for p in path.glob("*.gguf") if "mmproj" not in p.name.lower())
        if found:
            return found[0]
    return None


@dataclass
class Sources:
    """Where each tensor lives: tensor name -> file that holds it."""

    fmt: str
    files: list[Path]
    where: dict[str, Path]
    folder: Path


def resolve(path: Path) -> Sources:
    if not path.exists():
        raise ModelFormatError(f"{path}: no such file or folder")
    if path.is_file() and path.suffix.lower() in PICKLE_SUFFIXES:
        refuse_checkpoint(path)
    if path.is_dir():
        index = path / "model.safetensors.index.json"
        single = path / "model.safetensors"
        if index.is_file():
            return _resolve_index(index)
        if single.is_file():
            return Sources("safetensors", [single], {}, path)
        others = sorted(path.glob("*.safetensors"))
        indexes = sorted(path.glob("*.safetensors.index.json"))
        if indexes:
            return _resolve_index(indexes[0])
        if len(others) == 1:
            return Sources("safetensors", others, {}, path)
        if len(others) > 1:
            return Sources("safetensors-sharded", others, {}, path)
        pickles = [p for p in sorted(path.iterdir()) if p.suffix.lower() in PICKLE_SUFFIXES]
        if pickles:
            refuse_checkpoint(pickles[0])
        raise ModelFormatError(f"{path}: folder holds no .safetensors file")
    if path.name.endswith(".index.json"):
        return _resolve_index(path)
    if path.suffix.lower() == ".safetensors":
        return Sources("safetensors", [path], {}, path.parent)
    raise ModelFormatError(f"{path.name}: not a model file (expected {MODEL_KINDS})")


def _resolve_index(index: Path) -> Sources:
    data = load_json(index, "not a valid JSON index")
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ModelFormatError(f"{index.name}: has no 'weight_map' object")
    where: dict[str, Path] = {}
    for name, shard in weight_map.items():
        if not isinstance(shard, str) or "/" in shard or "\\" in shard or shard.startswith("."):
            raise ModelFormatError(
                f"{index.name}: shard name {shard!r} for {name!r} is not a plain file name"
            )
        where[name] = index.parent / shard
    files = sorted(set(where.values()))
    pickles = [f for f in files if f.suffix.lower() in PICKLE_SUFFIXES]
    if pickles:  # e.g. pytorch_model.bin.index.json
        raise PickleRefusedError(_pickle_message(pickles[0]))
    for f in files:
        if not os.path.lexists(f):
            raise ModelFormatError(f"{index.name}: shard {f.name} is missing")
        check_regular(f)
    return Sources("safetensors-sharded", files, where, index.parent)


# Mistral's params.json (consolidated.safetensors folders) names what config.json calls
_PARAMS = {"dim": "hidden_size", "vocab_size": "vocab_size", "n_layers": "num_hidden_layers"}


def read_config(folder: Path) -> dict:
    """config.json, else Mistral's params.json under config.json's names."""
    cfg, params = folder / "config.json", folder / "params.json"
    if cfg.is_file():
        data = load_json(cfg, "not valid JSON")
        return data if isinstance(data, dict) else {}
    if params.is_file():
        data = load_json(params, "not valid JSON")
        if isinstance(data, dict):
            return {_PARAMS[k]: v for k, v in data.items() if k in _PARAMS}
    return {}


@dataclass
class Located:
    """A safetensors model's open headers and its embedding tensor (nothing read yet)."""

    src: Sources
    config: dict
    handles: dict[Path, SafetensorsFile]
    where: dict[str, Path]  # every tensor name -> its file
    name: str  # the embedding
    info: TensorInfo

    def array(self, name: str):
        return self.handles[self.where[name]].array(name)

    def close(self) -> None:
        for h in self.handles.values():
            h.close()


def locate(path: Path, tensor: str | None) -> Located:
    """Open the headers of the safetensors files behind `path` and find the embedding."""
    src = resolve(path)
    config = read_config(src.folder)
    handles: dict[Path, SafetensorsFile] = {}
    try:
        for f in src.files:
            handles[f] = SafetensorsFile(f)
        where: dict[str, Path] = dict(src.where)
        for f, h in handles.items():
            for listed in h.tensors:
                where.setdefault(listed, f)
        for listed, f in where.items():
            if listed not in handles[f].tensors:
                raise ModelFormatError(
                    f"{f.name}: index says it holds {listed!r} but its header does not"
                )
        shapes = {n: tuple(handles[f].tensors[n].shape) for n, f in where.items()}
        name = find_embedding(path, shapes, config, tensor)
        info = handles[where[name]].tensors[name]
        check_embedding_shape(path.name, name, info.shape)
        if len(info.shape) != 2:
            raise ModelFormatError(
                f"{path.name}: tensor {name!r} has shape {list(info.shape)}, not [rows, dim]"
            )
        if info.dtype not in FLOAT_DTYPES:
            raise ModelFormatError(
                f"{path.name}: tensor {name!r} is {info.dtype}, not a floating-point embedding"
            )
        return Located(src, config, handles, where, name, info)
    except BaseException:
        for h in handles.values():
            h.close()
        raise


def check_embedding_shape(file_name: str, tensor: str, shape: Sequence[int]) -> None:
    """A usable embedding has at least one row and one column.

    A 0-byte tensor can declare any row count ([100000000, 0] fits in 96 bytes); every per-row
    table (used rows, labels, norms) would then be sized from a number the file does not back.
    A tensor with data is bounded by the file size, which the header parser already checked.
    """
    if len(shape) == 2 and (shape[0] == 0 or shape[1] == 0):
        shown = tensor if len(tensor) <= 60 else tensor[:59] + "…"
        raise ModelFormatError(
            f"{file_name}: tensor {shown!r} has shape {list(shape)} and holds no data, "
            "so it cannot be an embedding; pick another with --tensor NAME"
        )
