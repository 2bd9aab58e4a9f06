"""The window's child processes: how they start, how they talk to it, how they end.

Three children do work that holds the GIL for long (explorer/app/jobs.py): the fast index
builder (explorer/app/index_process.py), the whole-vocabulary map's layout
(explorer/app/whole_map_process.py) and the tokenizer service
(explorer/app/tokenizer_process.py). All are started by `Child`:

* ``python -m MODULE ARGS…`` with the background environment (`tuning.background_env`: thread
  pools that leave a core for the window, memory kept for reuse), optionally niced from its
  first line (`start_niced`);
* stdin and stdout are the message pipes; stderr goes to a temporary file, not a pipe, so that a
  child that writes much there can never block on it, and its last line explains a failure;
* ``Child.kill_on_cancel(ctx)`` kills it when the job is cancelled, which also ends a blocking
  read of its replies with end-of-file.

One framing both ways: a message is a 4-byte length, a JSON header, then the raw buffers whose
lengths the header's ``buffers`` lists. Nothing is pickled. In a child, `reply_channel()` is the
pipe to the parent (stray prints go to stderr).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any, BinaryIO

import numpy as np

from explorer.app import errands, tuning
from explorer.core.context import JobContext

_LENGTH = struct.Struct("<I")

Message = tuple[dict[str, Any], list[bytes]]


def write_message(out: BinaryIO, header: dict[str, Any], buffers: Sequence[Any] = ()) -> None:
    raw = [
        memoryview(np.ascontiguousarray(b).data if isinstance(b, np.ndarray) else b)
        for b in buffers
    ]
    head = json.dumps({**header, "buffers": [m.nbytes for m in raw]}).encode("utf-8")
    out.write(_LENGTH.pack(len(head)) + head)
    for m in raw:
        out.write(m.cast("B"))
    out.flush()


def _read_exact(inp: BinaryIO, n: int) -> bytes:
    data = inp.read(n)
    if data is None or len(data) != n:
        raise EOFError("the other end closed the pipe")
    return data


def read_message(inp: BinaryIO) -> Message:
    (size,) = _LENGTH.unpack(_read_exact(inp, _LENGTH.size))
    header = json.loads(_read_exact(inp, size))
    return header, [_read_exact(inp, n) for n in header.pop("buffers")]


def reply_channel() -> BinaryIO:
    """In a child: the pipe to the parent (fd 1); from now on fd 1 is stderr."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return out


def can_spawn() -> bool:
    """False in a frozen app, which cannot run ``-m``: the caller does the work in-process."""
    return not getattr(sys, "frozen", False)


# A child inherits the niceness of the thread that forks it, and a thread cannot be un-niced
# without privileges: niced children are forked on this thread, kept niced for it (job threads
# wait for it; it starts on first use, off the GUI thread).
_FORKER = errands.Errands("child-starter")


def start_niced(command: list[str], **popen_kwargs: Any) -> subprocess.Popen:
    """Start a child already at BACKGROUND_NICE (Linux), so that its interpreter's start and
    imports (a second of CPU, as the window opens a model) do not run at the window's priority."""
    return _FORKER.submit(_popen_niced, command, popen_kwargs).result()


def _popen_niced(command: list[str], popen_kwargs: dict[str, Any]) -> subprocess.Popen:
    tuning.lower_thread_priority(tuning.BACKGROUND_NICE)  # (once is enough; it stays so)
    return subprocess.Popen(command, **popen_kwargs)


class Child:
    """One child process speaking messages over its stdin and stdout."""

    def __init__(self, command: list[str], niced: bool, threads: int | None = None):
        self.command = command
        self.niced = niced
        self.threads = threads  # its thread pools' size; None: one core left for the window
        self._errors = tempfile.TemporaryFile("w+b")
        self.proc = self._start()

    def _start(self) -> subprocess.Popen:
        kwargs: dict[str, Any] = {
            "stdin": subprocess.PIPE,
            "stdout": subprocess.PIPE,
            "stderr": self._errors,
            "env": tuning.background_env(self.threads),
        }
        return (
            start_niced(self.command, **kwargs)
            if self.niced
            else subprocess.Popen(self.command, **kwargs)
        )

    def restart(self) -> None:
        """A new process in place of a dead one (its pipes closed)."""
        self._close_pipes()
        self.proc = self._start()

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def send(self, header: dict[str, Any], buffers: Sequence[Any] = ()) -> None:
        assert self.proc.stdin is not None
        write_message(self.proc.stdin, header, buffers)  # type: ignore[arg-type]

    def receive(self) -> Message:
        """The next message; EOFError (or ValueError, OSError) once the child is gone."""
        assert self.proc.stdout is not None
        return read_message(self.proc.stdout)  # type: ignore[arg-type]

    def kill_on_cancel(self, ctx: JobContext) -> None:
        ctx.call_on_cancel(self.kill)

    def kill(self) -> None:
        """End it now (any thread)."""
        if self.proc.poll() is None:
            self.proc.kill()

    def wait(self) -> int:
        return self.proc.wait()

    def last_error(self) -> str:
        """The last line it wrote to stderr, else its exit code."""
        self._errors.seek(0)
        lines = self._errors.read().decode("utf-8", errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self.proc.poll()}"

    def close(self) -> None:
        """Kill it, reap it and free its pipes and error file."""
        self.kill()
        self.proc.wait()
        self._close_pipes()
        self._errors.close()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
