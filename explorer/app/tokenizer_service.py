"""The tokenizer service: the model's tokenizer in a child process, so that the window's
process never imports `tokenizers` (its load and its encode hold the GIL; see
explorer/app/tokenizer_process.py for the child and the wire format).

``open_with_tokenizer`` is the window's open job: it starts the child, opens the matrix meanwhile,
then receives the vocabulary table and returns the model with a ``VocabTokenizer`` whose encoding
round-trips to the child. ``TokenizerService.close()`` ends the child (on model change and close).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.app import errands, tuning
from explorer.app.job_context import JobContext
from explorer.app.tokenizer_process import read_message, write_message
from explorer.core.errors import Cancelled, ExplorerError, ModelFormatError
from explorer.core.model.embedding import EmbeddingModel
from explorer.core.model.open import open_model
from explorer.core.tokenizer.vocab_table import VocabTable, VocabTokenizer

POLL = 0.05  # seconds between "is it done?" requests for work the child does on a thread


class TokenizerService:
    """One child process answering encode requests; safe to call from several worker threads.
    If the child dies, the next request starts a new one (the vocabulary is not sent again)."""

    def __init__(self, path: str | Path, tensor: str | None = None):
        self.command = [sys.executable, "-m", "explorer.app.tokenizer_process", str(path)]
        self.command.append(tensor or "")
        self._lock = threading.Lock()
        self._closed = False
        self._errors = tempfile.TemporaryFile("w+b")
        self._proc = self._start()

    def _start(self) -> subprocess.Popen:
        # stderr to a file, not a pipe: a child that writes much there can never block on it
        return subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=tuning.background_env(),
        )

    def _first_message(self) -> tuple[dict, list[bytes]]:
        assert self._proc.stdout is not None
        try:
            return read_message(self._proc.stdout)  # type: ignore[arg-type]
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
            if self._proc.poll() is not None:  # died (killed, crashed): restart it
                self._proc = self._start()
                self._first_message()
            assert self._proc.stdin is not None and self._proc.stdout is not None
            try:
                write_message(self._proc.stdin, {"op": op, "args": args})  # type: ignore[arg-type]
                return read_message(self._proc.stdout)  # type: ignore[arg-type]
            except (EOFError, OSError, ValueError):
                raise self._stopped() from None

    def _stopped(self) -> Exception:
        if self._closed:
            return Cancelled("tokenizer service closed")
        return ExplorerError(f"the tokenizer process stopped: {self._last_error()}")

    def _last_error(self) -> str:
        self._errors.seek(0)
        lines = self._errors.read().decode("utf-8", errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self._proc.poll()}"

    def kill(self) -> None:
        """End the child now (cancel: any thread)."""
        self._closed = True
        if self._proc.poll() is None:
            self._proc.kill()

    def close(self) -> None:
        """End the child and free its pipes. Quick on any thread: the child only serves encode
        requests, so it is killed rather than asked; a request under way ends as Cancelled."""
        self.kill()
        self._proc.wait()
        with self._lock:  # the request under way (if any) has seen end-of-file by now
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:
                        pass
            self._errors.close()

    def close_soon(self) -> None:
        """``close`` without waiting here (the GUI thread): the child is killed now, and reaped
        and its pipes freed on a thread. A dying child can take 50-150 ms to exit on a busy
        machine, holding a large tokenizer."""
        self.kill()
        errands.REAPER.submit(self.close)

    @property
    def running(self) -> bool:
        return self._proc.poll() is None


@dataclass(frozen=True)
class Opened:
    model: EmbeddingModel
    service: TokenizerService | None


def open_with_tokenizer(
    path: str | Path, tensor: str | None, ctx: JobContext | None = None
) -> Opened:
    """Worker thread: the model without its tokenizer here, the tokenizer in a child process."""
    if getattr(sys, "frozen", False):  # a frozen app cannot run `-m`: load it in this process
        model = open_model(path, tensor=tensor)
        model.file_size  # noqa: B018 - stat()ed here, not on the GUI thread
        return Opened(model, None)
    service = TokenizerService(path, tensor)  # loads while this thread opens the matrix
    if ctx is not None:
        ctx.call_on_cancel(service.kill)
    try:
        model = open_model(path, tensor=tensor, tokenizer=False)
        model.file_size  # noqa: B018 - stat()ed here, not on the GUI thread
        tokenizer, warnings = service.wait_ready(model.rows)
        if ctx is not None:
            ctx.raise_if_cancelled()
        if tokenizer is not None:
            model.tokenizer = tokenizer.prepare()  # find()'s tables, built here
            model.tokenizer_warnings = warnings
    except BaseException:
        service.close()
        raise
    return Opened(model, service if tokenizer is not None else None)
