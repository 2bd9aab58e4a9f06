"""A model on disk: finds the input embedding, the output head, the tokenizer and the config."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from explorer.core.errors import ModelFormatError, PickleRefusedError, TokenError
from explorer.core.filecheck import check_mapped, first_change
from explorer.core.formats.jsonfile import load_json
from explorer.core.formats.safetensors import FLOAT_DTYPES, SafetensorsFile
from explorer.core.model_checks import check_embedding_shape
from explorer.core.tokens import TokenizerInfo
from explorer.core.vectors import decode_rows

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")

_EMBED_BASES = (
    "model.embed_tokens.weight",
    "embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "embeddings.word_embeddings.weight",
    "tok_embeddings.weight",
    "gpt_neox.embed_in.weight",
    "word_embeddings.weight",
)
EMBEDDING_NAMES = _EMBED_BASES + tuple(
    f"{prefix}.{name}" for prefix in ("bert", "roberta") for name in _EMBED_BASES
)
OUTPUT_NAMES = ("lm_head.weight", "embed_out.weight", "output.weight")


def _pickle_message(path: Path) -> str:
    return (
        f"{path.name} is a pickle checkpoint; pickle files can run arbitrary code, so Embedding "
        "Explorer never opens them. Convert it to safetensors first, e.g. "
        "`safetensors.torch.save_file(torch.load(path, weights_only=True), 'model.safetensors')`."
    )


@dataclass
class _Sources:
    """Where each tensor lives: tensor name -> file that holds it."""

    fmt: str
    files: list[Path]
    where: dict[str, Path]
    folder: Path


def _resolve(path: Path) -> _Sources:
    if not path.exists():
        raise ModelFormatError(f"{path}: no such file or folder")
    if path.is_file() and path.suffix.lower() in PICKLE_SUFFIXES:
        raise PickleRefusedError(_pickle_message(path))
    if path.is_dir():
        index = path / "model.safetensors.index.json"
        single = path / "model.safetensors"
        if index.is_file():
            return _resolve_index(index)
        if single.is_file():
            return _Sources("safetensors", [single], {}, path)
        others = sorted(path.glob("*.safetensors"))
        indexes = sorted(path.glob("*.safetensors.index.json"))
        if indexes:
            return _resolve_index(indexes[0])
        if len(others) == 1:
            return _Sources("safetensors", others, {}, path)
        if len(others) > 1:
            return _Sources("safetensors-sharded", others, {}, path)
        pickles = [p for p in sorted(path.iterdir()) if p.suffix.lower() in PICKLE_SUFFIXES]
        if pickles:
            raise PickleRefusedError(_pickle_message(pickles[0]))
        raise ModelFormatError(f"{path}: folder holds no .safetensors file")
    if path.name.endswith(".index.json"):
        return _resolve_index(path)
    if path.suffix.lower() == ".safetensors":
        return _Sources("safetensors", [path], {}, path.parent)
    raise ModelFormatError(
        f"{path.name}: not a model file "
        "(expected a folder, .safetensors or .safetensors.index.json)"
    )


def _resolve_index(index: Path) -> _Sources:
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
        if not f.is_file():
            raise ModelFormatError(f"{index.name}: shard {f.name} is missing")
    return _Sources("safetensors-sharded", files, where, index.parent)


def _read_config(folder: Path) -> dict:
    cfg = folder / "config.json"
    if not cfg.is_file():
        return {}
    data = load_json(cfg, "not valid JSON")
    return data if isinstance(data, dict) else {}


def _config_value(config: dict, key: str) -> object:
    """Look in the config and in a nested text_config (multimodal models)."""
    if key in config:
        return config[key]
    text = config.get("text_config")
    if isinstance(text, dict) and key in text:
        return text[key]
    return None


@dataclass
class EmbeddingModel:
    path: Path
    format: str
    files: list[Path]
    tensor: str
    dtype: str
    rows: int
    dim: int
    matrix: np.ndarray  # read-only memmap [rows, dim] in the stored dtype
    output_tensor: str | None
    tied: bool | None
    tokenizer: TokenizerInfo | None
    config: dict = field(default_factory=dict)
    _handles: list[SafetensorsFile] = field(default_factory=list, repr=False)

    @property
    def file_size(self) -> int:
        return sum(f.stat().st_size for f in self.files)

    @property
    def tokenizer_vocab_size(self) -> int | None:
        return self.tokenizer.vocab_size if self.tokenizer else None

    @cached_property
    def used_rows(self) -> np.ndarray:
        """bool [rows]: True where the tokenizer has a token for the row (all rows without one)."""
        mask = np.ones(self.rows, dtype=bool)
        if self.tokenizer is not None:
            pieces = self.tokenizer.pieces[: self.rows]  # ids may have holes
            mask[: len(pieces)] = np.fromiter(
                (p is not None for p in pieces), dtype=bool, count=len(pieces)
            )
            mask[len(pieces) :] = False
        mask.flags.writeable = False  # shared by every caller
        return mask

    @cached_property
    def unused_rows(self) -> int:
        """Rows the tokenizer never produces (padding up to a round vocabulary size)."""
        return int(self.rows - np.count_nonzero(self.used_rows))

    def check_id(self, token_id: int) -> int:
        if not 0 <= token_id < self.rows:
            raise TokenError(
                f"token id {token_id} is out of range: the embedding has {self.rows} rows"
            )
        return int(token_id)

    def is_unused(self, token_id: int) -> bool:
        return self.tokenizer is not None and not self.tokenizer.has_id(token_id)

    def label(self, token_id: int) -> str:
        """Readable label for any row id, including rows the tokenizer does not use."""
        if self.tokenizer is None:
            return f"#{token_id}"
        return self.tokenizer.label(token_id)

    def raw_rows(self, ids) -> np.ndarray:
        if self.matrix.shape[0] != self.rows:  # a worker may still ask after the model was closed
            raise ModelFormatError(f"{self.path.name}: the model was closed")
        try:
            ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        except OverflowError:
            raise TokenError(
                f"a token id is out of range: the embedding has {self.rows} rows"
            ) from None
        bad = ids[(ids < 0) | (ids >= self.rows)]
        if bad.size:
            self.check_id(int(bad[0]))
        check_mapped(self.matrix)  # a file that shrank since it was opened would kill us (SIGBUS)
        return np.asarray(self.matrix[ids])

    def vectors(self, ids) -> np.ndarray:
        """Rows decoded exactly to float32 (float64 for F64), shape [len(ids), dim]."""
        return decode_rows(self.raw_rows(ids))

    def vector(self, token_id: int) -> np.ndarray:
        return self.vectors([token_id])[0]

    def decode_block(self, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop) decoded to float32 (float64 for F64), whatever the stored format.

        The one way to stream a whole matrix of any dtype (quantised GGUF included) in blocks;
        kernels that read ``matrix`` directly must handle its dtype themselves.
        """
        start, stop = max(0, start), min(self.rows, stop)
        check_mapped(self.matrix)
        return decode_rows(np.asarray(self.matrix[start:stop]))

    def changed_on_disk(self) -> str | None:
        """Why the model's files no longer match what was opened (None: unchanged); cheap."""
        return first_change(self._handles)

    def info(self) -> dict:
        return {
            "path": str(self.path),
            "format": self.format,
            "tensor": self.tensor,
            "rows": self.rows,
            "dim": self.dim,
            "dtype": self.dtype,
            "tied": self.tied,
            "output_tensor": self.output_tensor,
            "tokenizer_vocab_size": self.tokenizer_vocab_size,
            "unused_rows": self.unused_rows,
            "file_size": self.file_size,
            "files": [str(f) for f in self.files],
        }

    def close(self) -> None:
        self.matrix = np.zeros((0, self.dim), dtype=self.matrix.dtype)
        for h in self._handles:
            h.close()
        self._handles.clear()


def open_model(
    path: str | Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    """Open a model folder, a .safetensors file or a .safetensors.index.json, read-only."""
    path = Path(path).expanduser()
    src = _resolve(path)
    config = _read_config(src.folder)
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

        def info_of(name: str):
            return handles[where[name]].tensors[name]

        vocab_size = _config_value(config, "vocab_size")
        name: str | None = None
        if tensor is not None:
            if tensor not in where:
                raise ModelFormatError(f"{path.name}: has no tensor named {tensor!r}")
            name = tensor
        else:
            name = next((n for n in EMBEDDING_NAMES if n in where), None)
            if name is None and isinstance(vocab_size, int):
                name = next(
                    (
                        n
                        for n in sorted(where)
                        if len(info_of(n).shape) == 2
                        and info_of(n).shape[0] == vocab_size
                        and not n.endswith(OUTPUT_NAMES)
                    ),
                    None,
                )
            if name is None:
                candidates = [n for n in sorted(where) if len(info_of(n).shape) == 2]
                if len(candidates) == 1:
                    name = candidates[0]
            if name is None:
                raise ModelFormatError(
                    f"{path.name}: no input embedding found (looked for {EMBEDDING_NAMES[0]} and "
                    f"{len(EMBEDDING_NAMES) - 1} other names); pick one with --tensor NAME"
                )
        info = info_of(name)
        check_embedding_shape(path.name, name, info.shape)
        if len(info.shape) != 2:
            raise ModelFormatError(
                f"{path.name}: tensor {name!r} has shape {list(info.shape)}, not [rows, dim]"
            )
        if info.dtype not in FLOAT_DTYPES:
            raise ModelFormatError(
                f"{path.name}: tensor {name!r} is {info.dtype}, not a floating-point embedding"
            )

        output = next((n for n in OUTPUT_NAMES if n in where and n != name), None)
        tie_flag = _config_value(config, "tie_word_embeddings")
        if isinstance(tie_flag, bool):
            tied: bool | None = tie_flag
        elif output is not None:
            tied = False
        elif config:
            tied = True  # transformers' default, and no separate head is stored
        else:
            tied = None

        tok = None
        if tokenizer:
            tok_path = src.folder / "tokenizer.json"
            if tok_path.is_file():
                tok = TokenizerInfo.from_file(tok_path, rows=info.shape[0])

        handle = handles[where[name]]
        return EmbeddingModel(
            path=path,
            format=src.fmt,
            files=list(src.files),
            tensor=name,
            dtype=info.dtype,
            rows=info.shape[0],
            dim=info.shape[1],
            matrix=handle.array(name),
            output_tensor=output,
            tied=tied,
            tokenizer=tok,
            config=config,
            _handles=list(handles.values()),
        )
    except BaseException:
        for h in handles.values():
            h.close()
        raise
