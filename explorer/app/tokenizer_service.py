"""The tokenizer service: the model's tokenizer in a child process, so that the window's
process never imports `tokenizers` (its load and its encode hold the GIL; see
explorer/app/tokenizer_process.py for the child, explorer/app/child.py for how it is started and
spoken to).

``open_with_tokenizer`` is the window's open job: it starts the child, opens the matrix meanwhile,
then receives the vocabulary table and returns the model with a ``VocabTokenizer`` whose encoding
round-trips to the child. ``TokenizerService.close()`` ends the child (on model change and close).
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.app import errands
from explorer.app.child import Child, Message, can_spawn
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import Cancelled, ExplorerError, ModelFormatError
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.model.open import open_model
from explorer.core.tokenizer.vocab_table import VocabTable, VocabTokenizer

POLL = 0.05  # seconds between "is it done?" requests for work the child does on a thread


class TokenizerService:
    """One child process answering encode requests; safe to call from several worker threads.
    If the child dies, the next request starts a new one (the vocabulary is not sent again)."""

    def __init__(self, path: str | Path, tensor: str | None = None, rows: int | None = None):
        """The tokenizer of the model at `path`; with `rows`, the tokenizer at `path` itself (a
        tokenizer.json, a folder or a GGUF) for a matrix of that many rows."""
        command = [sys.executable, "-m", "explorer.app.tokenizer_process", str(path)]
        self._lock = threading.Lock()
        self._closed = False
        # Not niced (unlike the index builder): on a busy machine a niced load waits behind every
        # other process (a 2 s open took over 30 s at load 11), and the window waits for it.
        self._child = Child(
            [*command, tensor or "", *([str(rows)] if rows is not None else [])], niced=False
        )

    def _first_message(self) -> Message:
        try:
            return self._child.receive()
        except (EOFError, ValueError):
            raise self._stopped() from None

    def wait_ready(self, rows: int) -> tuple[VocabTokenizer | None, list[str]]:
        """Blocks (worker thread) until the child has loaded the tokenizer."""
        header, buffers = self._first_message()
        if header["op"] == "error":
            raise ModelFormatError(header["message"])
        if header["op"] == "none":
            self.close()
            return None, []
        table = VocabTable.from_buffers(header["meta"], buffers)
        tokenizer = VocabTokenizer(
            table,
            self.encode_ids,
            rows,
            self.encode_batch_ids,
            kinds=self.kinds,
            vocab_order=self.vocab_order,
        )
        return tokenizer, list(header["warnings"])

    def encode_ids(self, text: str, special: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ids, offsets, specials = self._ask("encode", {"text": text, "special": special})
        return (
            np.frombuffer(ids, dtype=np.int64),
            np.frombuffer(offsets, dtype=np.int64).reshape(-1, 2),
            np.frombuffer(specials, dtype=np.uint8).astype(bool),
        )

    def encode_batch_ids(self, texts: list[str]) -> list[np.ndarray]:
        """Ids of each text without special tokens, in one request (a corpus to train on)."""
        flat, lengths = self._ask("encode_batch", {"texts": list(texts)})
        ends = np.cumsum(np.frombuffer(lengths, dtype=np.int64))
        return np.split(np.frombuffer(flat, dtype=np.int64), ends[:-1]) if len(ends) else []

    def kinds(self, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Kind codes, word starts and continuations of every row, made in the child."""
        codes, starts, continues = self._when_done("kinds", rows)
        return (
            np.frombuffer(codes, dtype=np.uint8).copy(),
            np.frombuffer(starts, dtype=np.uint8).astype(bool),
            np.frombuffer(continues, dtype=np.uint8).astype(bool),
        )

    def vocab_order(self, rows: int) -> np.ndarray:
        """Row ids sorted by their labels' search keys (the Find box's index), made in the
        child: 248k labels and their sort are a second of Python there, not here."""
        (order,) = self._when_done("vocab_order", rows)
        return np.frombuffer(order, dtype=np.int64)

    def _when_done(self, op: str, rows: int) -> list[bytes]:
        """Asks again every POLL seconds while the child works, so other requests go in
        between."""
        while True:
            header, buffers = self._request(op, {"rows": int(rows)})
            if header["op"] == "error":
                raise ExplorerError(header["message"])
            if header["op"] == op:
                return buffers
            time.sleep(POLL)

    def _ask(self, op: str, args: dict) -> list[bytes]:
        return self._request(op, args)[1]

    def _request(self, op: str, args: dict) -> tuple[dict, list[bytes]]:
        with self._lock:
            if self._closed:
                raise Cancelled("tokenizer service closed")
            if not self._child.running:  # died (killed, crashed): restart it
                self._child.restart()
                self._first_message()
            try:
                self._child.send({"op": op, "args": args})
                return self._child.receive()
            except (EOFError, OSError, ValueError):
                raise self._stopped() from None

    def _stopped(self) -> Exception:
        if self._closed:
            return Cancelled("tokenizer service closed")
        return ExplorerError(f"the tokenizer process stopped: {self._child.last_error()}")

    def kill(self) -> None:
        """End the child now (cancel: any thread)."""
        self._closed = True
        self._child.kill()

    def close(self) -> None:
        """End the child and free its pipes. Quick on any thread: the child only serves encode
        requests, so it is killed rather than asked; a request under way ends as Cancelled."""
        self.kill()
        self._child.wait()
        with self._lock:  # the request under way (if any) has seen end-of-file by now
            self._child.close()

    def close_soon(self) -> None:
        """``close`` without waiting here (the GUI thread): the child is killed now, and reaped
        and its pipes freed on a thread. A dying child can take 50-150 ms to exit on a busy
        machine, holding a large tokenizer."""
        self.kill()
        errands.FIRE_AND_FORGET.submit(self.close)

    @property
    def running(self) -> bool:
        return self._child.running


@dataclass(frozen=True)
class Opened:
    model: EmbeddingModel
    service: TokenizerService | None


def open_with_tokenizer(
    path: str | Path, tensor: str | None, ctx: JobContext = NULL_CONTEXT
) -> Opened:
    """Worker thread: the model without its tokenizer here, the tokenizer in a child process."""
    if not can_spawn():  # load it in this process
        model = open_model(path, tensor=tensor)
        model.file_size  # noqa: B018 - stat()ed here, not on the GUI thread
        return Opened(model, None)
    service = TokenizerService(path, tensor)  # loads while this thread opens the matrix
    ctx.call_on_cancel(service.kill)
    try:
        model = open_model(path, tensor=tensor, tokenizer=False)
        model.file_size  # noqa: B018 - stat()ed here, not on the GUI thread
        tokenizer, warnings = service.wait_ready(model.rows)
        ctx.check()
        if tokenizer is not None:
            model.tokenizer = tokenizer.prepare()  # find()'s tables, built here
            model.tokenizer_warnings = warnings
    except BaseException:
        service.close()
        raise
    return Opened(model, service if tokenizer is not None else None)
