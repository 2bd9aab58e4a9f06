"""A model on disk: finds the input embedding, the output head, the tokenizer and the config."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from explorer.core import heads
from explorer.core.errors import ModelFormatError, PickleRefusedError, TokenError
from explorer.core.filecheck import check_mapped, first_change
from explorer.core.formats.jsonfile import load_json
from explorer.core.formats.safetensors import FLOAT_DTYPES, SafetensorsFile
from explorer.core.heads import HeadEvidence
from explorer.core.model_checks import check_embedding_shape
from explorer.core.tensor_names import (  # noqa: F401 - EMBEDDING_NAMES is re-exported
    EMBEDDING_NAMES,
    OUTPUT_NAMES,
    find_embedding,
)
from explorer.core.tokens import TokenizerInfo, _spec_of
from explorer.core.vectors import decode_rows

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")


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
    head: HeadEvidence = field(default_factory=lambda: HeadEvidence(None, "unknown"))
    tokenizer_warnings: list[str] = field(default_factory=list)
    _head_matrix: np.ndarray | None = field(default=None, repr=False)

    @property
    def warnings(self) -> list[str]:
        return [*self.head.warnings, *self.tokenizer_warnings]

    @property
    def tokenizer_source(self) -> str | None:
        return self.tokenizer.source if self.tokenizer is not None else None

    def check_head(self, cancel=None) -> HeadEvidence:
        """Compare every row of a stored head that matched in the sampled rows (in blocks).

        Costs one read of both matrices; run it off the GUI thread. Sets `head` and `tied`.
        """
        if self.head.complete or self._head_matrix is None or self.output_tensor is None:
            return self.head
        same = heads.compare_blocks(self.matrix, self._head_matrix, cancel)
        tie_flag = _config_value(self.config, "tie_word_embeddings")
        self.head = heads.with_head(self.tensor, self.output_tensor, same, tie_flag, True)
        self.tied = self.head.tied
        return self.head

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

    def decode_output_block(self, start: int, stop: int) -> np.ndarray | None:
        """Rows [start, stop) of the separate output head, decoded like decode_block; None if the
        model has no separate head tensor."""
        head = self._head_matrix
        if head is None or self.output_tensor is None:
            return None
        return decode_rows(np.asarray(head[max(0, start) : max(0, stop)]))

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
            "head": self.head.words,
            "warnings": self.warnings,
            "output_tensor": self.output_tensor,
            "tokenizer_vocab_size": self.tokenizer_vocab_size,
            "tokenizer_source": self.tokenizer_source,
            "unused_rows": self.unused_rows,
            "file_size": self.file_size,
            "files": [str(f) for f in self.files],
        }

    def close(self) -> None:
        self.matrix = np.zeros((0, *self.matrix.shape[1:]), dtype=self.matrix.dtype)
        self._head_matrix = None
        for h in self._handles:
            h.close()
        self._handles.clear()


def open_model(
    path: str | Path, tensor: str | None = None, tokenizer: bool = True
) -> EmbeddingModel:
    """Open a model folder, a .safetensors, .safetensors.index.json or .gguf file, read-only."""
    path = Path(path).expanduser()
    if not path.exists():  # a cached Hugging Face repo id or an Ollama model name
        from explorer.core.stores import resolve

        path = resolve(str(path)) or path
    gguf_file = _gguf_in(path)
    if gguf_file is not None:
        from explorer.core.model_gguf import open_gguf  # imports gguf only for GGUF files

        return open_gguf(gguf_file, path, tensor=tensor, tokenizer=tokenizer)
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
        matrix = handles[where[name]].array(name)
        output = next((n for n in OUTPUT_NAMES if n in where and n != name), None)
        head_matrix = None
        if output is not None and handles[where[output]].tensors[output].dtype in FLOAT_DTYPES:
            head_matrix = handles[where[output]].array(output)
        evidence = head_evidence(name, matrix, output, head_matrix, config)
        tok, tok_warnings = folder_tokenizer(src.folder, info.shape[0]) if tokenizer else (None, [])
        return EmbeddingModel(
            path=path,
            format=src.fmt,
            files=list(src.files),
            tensor=name,
            dtype=info.dtype,
            rows=info.shape[0],
            dim=info.shape[1],
            matrix=matrix,
            output_tensor=output,
            tied=evidence.tied,
            tokenizer=tok,
            config=config,
            _handles=list(handles.values()),
            head=evidence,
            tokenizer_warnings=tok_warnings,
            _head_matrix=head_matrix,
        )
    except BaseException:
        for h in handles.values():
            h.close()
        raise


def _gguf_in(path: Path) -> Path | None:
    """The .gguf file to open for `path` (a .gguf file, or a folder holding only GGUF weights)."""
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path
    if path.is_file() and not path.suffix:  # an Ollama blob: sha256-…, no suffix
        with open(path, "rb") as f:
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


def head_evidence(
    name: str,
    matrix: np.ndarray,
    output: str | None,
    head_matrix: np.ndarray | None,
    config: dict,
    gguf: bool = False,
) -> HeadEvidence:
    """Tied or not from the contents: sampled rows now; `check_head` compares the rest."""
    tie_flag = _config_value(config, "tie_word_embeddings")
    if output is None:
        return heads.without_head(config, tie_flag, gguf=gguf)
    if head_matrix is None:
        return heads.with_head(name, output, False, tie_flag, True)
    rows = heads.sample_rows(matrix.shape[0])
    same = heads.compare(matrix, head_matrix, rows)
    complete = not same or matrix.shape[0] <= len(rows)
    return heads.with_head(name, output, same, tie_flag, complete)


def folder_tokenizer(folder: Path, rows: int) -> tuple[TokenizerInfo | None, list[str]]:
    """tokenizer.json, else one built from vocab.json + merges.txt or vocab.txt."""
    tok_path = folder / "tokenizer.json"
    if tok_path.is_file():
        return TokenizerInfo.from_file(tok_path, rows=rows), []
    from explorer.core.tokenizer_sources import from_folder

    built = from_folder(folder)
    if built is None:
        return None, []
    info = TokenizerInfo(built.tokenizer, _spec_of(built.tokenizer), rows=rows, source=built.source)
    return info, built.warnings
