"""Real model files for the window tests and the latency benchmark (written in tmp folders)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np

from explorer.core.model.formats.safetensors import write_safetensors


def _tokenizer_json(words: list[str]) -> dict:
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    for w in words:
        vocab.setdefault(w, len(vocab))
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t, i in (("[UNK]", 0), ("[CLS]", 1), ("[SEP]", 2))
        ],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"Sequence": {"id": "A", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]},
            },
        },
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
    }


WORDS = ["the", "cat", "sat", "on", "mat", "dog", "a", "kitten", "banana", "hello", "world"]


def make_model(
    folder: Path, rows: int = 16, dim: int = 8, seed: int = 0, dtype=ml_dtypes.bfloat16
) -> tuple[Path, np.ndarray]:
    """A tiny real model folder: safetensors embedding + WordLevel tokenizer.json + config."""
    folder.mkdir(parents=True, exist_ok=True)
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(dtype)
    write_safetensors(folder / "model.safetensors", {"model.embed_tokens.weight": matrix})
    words = WORDS[: max(0, rows - 3)]
    (folder / "tokenizer.json").write_text(json.dumps(_tokenizer_json(words)), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"vocab_size": rows}), encoding="utf-8")
    return folder, matrix


def wordlevel_tokenizer(path: Path, words: list[str]) -> None:
    path.write_text(json.dumps(_tokenizer_json(words)), encoding="utf-8")


def write_bf16_model(
    folder: Path,
    rows: int,
    dim: int,
    seed: int = 0,
    chunk_rows: int = 4096,
    tensor: str = "model.embed_tokens.weight",
) -> Path:
    """A large BF16 model written chunk by chunk (never the whole matrix in RAM), with a
    WordLevel tokenizer whose tokens are w0, w1, …"""
    folder.mkdir(parents=True, exist_ok=True)
    nbytes = rows * dim * 2
    header = json.dumps(
        {tensor: {"dtype": "BF16", "shape": [rows, dim], "data_offsets": [0, nbytes]}}
    ).encode()
    header += b" " * (-len(header) % 8)
    rng = np.random.default_rng(seed)
    with open(folder / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for start in range(0, rows, chunk_rows):
            n = min(chunk_rows, rows - start)
            block = (rng.standard_normal((n, dim), dtype=np.float32) * 0.02).astype(
                ml_dtypes.bfloat16
            )
            f.write(block.tobytes())
    wordlevel_tokenizer(folder / "tokenizer.json", [f"w{i}" for i in range(rows - 3)])
    (folder / "config.json").write_text(json.dumps({"vocab_size": rows}), encoding="utf-8")
    return folder


def activate(qtbot, controller) -> None:
    """Show an analysis controller's view: its refresh starts on the next event-loop turn."""
    controller.set_active(True)
    qtbot.waitUntil(lambda: not controller.stale)


def open_window(qtbot, path, size: tuple[int, int] = (1280, 800), timeout: int = 30000, **kwargs):
    """A shown main window (MainWindow keyword arguments in `kwargs`) with the model at `path`
    open and every job it started done."""
    from explorer.app.state import AppState
    from explorer.ui.window.main_window import MainWindow

    win = MainWindow(AppState(), **kwargs)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    with qtbot.waitSignal(win.state.modelChanged, timeout=30000):
        win.open_path(str(path))
    qtbot.waitUntil(lambda: not win.pending, timeout=timeout)
    return win


def cell_colours(view, image, row: int, col: int) -> set[str]:
    """The colours (#rrggbb) inside cell (row, col) of a table view, in `image`, a grab of its
    viewport."""
    rect = view.visualRect(view.model().index(row, col))
    return {
        image.pixelColor(x, y).name()
        for x in range(rect.left(), rect.right())
        for y in range(rect.top(), rect.bottom())
    }


def near(a: str, b: str, tolerance: int = 24) -> bool:
    """Two colours within a few levels of each other (anti-aliased glyph cores)."""
    from PySide6.QtGui import QColor

    ca, cb = QColor(a), QColor(b)
    return (
        max(abs(ca.red() - cb.red()), abs(ca.green() - cb.green()), abs(ca.blue() - cb.blue()))
        <= tolerance
    )
