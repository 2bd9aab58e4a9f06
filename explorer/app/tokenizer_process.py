"""The tokenizer service's child process (started and spoken to as explorer/app/child.py says).

The Rust tokenizer holds the GIL while it loads (over a second for a 248k-token BPE) and while it
encodes, so the window's process never imports it: this child loads the model's tokenizer
(tokenizer.json, vocab files, tokenizer.model or GGUF metadata: core/model_tokenizer.py),
sends the vocabulary once as a ``VocabTable`` (a few flat buffers), then answers encode requests
with ids, offsets and special flags as arrays; the kind of every token and the ids in the Find
box's order as arrays, made on a thread.
It exits when its stdin closes.

    python -m explorer.app.tokenizer_process MODEL_PATH [TENSOR]
    python -m explorer.app.tokenizer_process TOKENIZER_PATH "" ROWS
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, BinaryIO

import numpy as np

from explorer.app import tuning
from explorer.app.child import read_message, reply_channel, write_message


def _encode(tokenizer: Any, text: str, special: bool) -> list[np.ndarray]:
    enc = tokenizer.encode_batch([text], add_special_tokens=special)[0]
    return [
        np.asarray(enc.ids, dtype=np.int64),
        np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2),
        np.asarray(enc.special_tokens_mask, dtype=np.uint8),
    ]


class _Job:
    """Work over the whole vocabulary on a thread of the child (about a second of Python for
    248k tokens); its request answers "pending" until the work is done, so encode requests in
    between are not held up."""

    def __init__(self, name: str, work: Callable[[], list[np.ndarray]]):
        self.name, self.work = name, work
        self.result: list[np.ndarray] | None = None
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        # at a lower priority: on two cores it took the window's core while a model opened
        # (encode requests, on the main thread, wait for it only as long as it holds the GIL);
        # first thing, before any import (importing tuning here took ~25 ms at niceness 0)
        tuning.lower_thread_priority(tuning.BACKGROUND_NICE)
        try:
            self.result = self.work()
        except Exception as e:  # reported to the window as an error, not a dead child
            self.error = f"{self.name} failed: {e}"

    def reply(self, out: BinaryIO) -> None:
        if self.thread.is_alive():
            write_message(out, {"op": "pending"})
        elif self.error is not None:
            write_message(out, {"op": "error", "message": self.error})
        else:
            write_message(out, {"op": self.name}, self.result or [])


def _kinds(info: Any, rows: int) -> list[np.ndarray]:
    from types import SimpleNamespace

    from explorer.core.analysis.kinds import token_kinds

    k = token_kinds(SimpleNamespace(rows=rows, tokenizer=info))
    return [k.codes, k.word_start.view(np.uint8), k.continuation.view(np.uint8)]


def _vocab_order(info: Any, rows: int) -> list[np.ndarray]:
    from explorer.core.tokenizer.vocab_index import sorted_ids

    return [np.asarray(sorted_ids([info.label(i) for i in range(rows)]), dtype=np.int64)]


_WORK = {"kinds": _kinds, "vocab_order": _vocab_order}


def serve(
    path: str, tensor: str | None, inp: BinaryIO, out: BinaryIO, rows: int | None = None
) -> int:
    """Serve the tokenizer of the model at `path`; with `rows`, the tokenizer at `path` itself
    (File › Open tokenizer…) for a matrix of that many rows."""
    from explorer.core.errors import ExplorerError
    from explorer.core.model.tokenizer import load_tokenizer, tokenizer_at
    from explorer.core.tokenizer.vocab_table import VocabTable

    # Not niced (see TokenizerService): it holds no lock the window needs, and its thread pools
    # leave a core (tuning.background_env).
    try:
        info, warnings = (
            tokenizer_at(path, rows) if rows is not None else load_tokenizer(path, tensor=tensor)
        )
    except ExplorerError as e:
        write_message(out, {"op": "error", "message": str(e)})
        return 2
    if info is None:  # the model has no tokenizer
        write_message(out, {"op": "none"})
        return 0
    # a tokenizer.json seen before brings its table from the user cache (json_cache)
    table = getattr(info, "table", None) or VocabTable.from_info(info)
    header = {"op": "ready", "meta": table.meta, "warnings": warnings}
    write_message(out, header, table.buffers())
    del table
    jobs: dict[tuple[str, int], _Job] = {}
    while True:
        try:
            request, _ = read_message(inp)
        except EOFError:
            return 0
        if request.get("op") == "encode":
            write_message(out, {"op": "encoded"}, _encode(info.tokenizer, **request["args"]))
        elif request.get("op") == "encode_batch":
            ids = info.encode_batch_ids(request["args"]["texts"])
            lengths = np.array([len(a) for a in ids], dtype=np.int64)
            flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
            write_message(out, {"op": "encoded"}, [flat, lengths])
        elif request.get("op") in _WORK:
            op, rows = request["op"], int(request["args"]["rows"])
            if (op, rows) not in jobs:
                jobs[op, rows] = _Job(op, partial(_WORK[op], info, rows))
            jobs[op, rows].reply(out)
        else:
            return 0


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    out = reply_channel()
    tensor = args[1] if len(args) > 1 and args[1] else None
    rows = int(args[2]) if len(args) > 2 else None
    return serve(args[0], tensor, sys.stdin.buffer, out, rows)


if __name__ == "__main__":
    raise SystemExit(main())
