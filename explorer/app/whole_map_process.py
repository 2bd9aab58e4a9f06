"""Lay out the whole-vocabulary map in a child process, so that the window never waits for it.

numba's compilation (the first run after an install) and the numpy stages between the compiled
kernels hold the GIL for seconds at a time; in a worker *thread* that stops the window's event
loop just as surely as running it there. A child (explorer/app/child.py) runs
`explorer.core.map.whole.whole_map` and sends its progress, the first picture and the final
layout as messages (coordinates as raw float32 buffers); it also writes the layout to the cache
as the in-process map does.
Cancelling kills the child at once, whatever stage it is in.

    python -m explorer.app.whole_map_process MODEL_PATH TENSOR CACHE_DIR PARAMS_JSON
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from explorer.app import tuning
from explorer.app.child import Child, can_spawn, reply_channel, write_message
from explorer.core import cache
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import ExplorerError
from explorer.core.map import whole
from explorer.core.model.embedding import EmbeddingModel

WHAT = "the whole-vocabulary map"


def child_command(model: EmbeddingModel, params: whole.WholeParams, cache_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "explorer.app.whole_map_process",
        str(model.path),
        model.tensor,
        str(cache_dir),
        json.dumps(asdict(params)),
    ]


def whole_map_in_child(
    model: EmbeddingModel,
    params: whole.WholeParams | None = None,
    ctx: JobContext = NULL_CONTEXT,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    on_picture: Callable[[whole.WholeMap], None] | None = None,
) -> whole.WholeMap:
    """`whole.whole_map`, computed in a child process (in this one where a child cannot be
    started): the same arguments, partial result and return value. A cached layout is read
    here without starting one. Cancelling `ctx` kills the child and raises Cancelled."""
    params = params or whole.WholeParams()
    cache_dir = Path(cache_dir or cache.default_cache_dir())
    if not can_spawn() or model.rows < whole.MIN_ROWS:
        return whole.whole_map(model, params, ctx, cache_dir, use_cache, on_picture)
    hidden = whole.hidden_rows(model)
    if use_cache:
        coords = whole.load_cached(model, params, cache_dir)
        if coords is not None:
            ctx.progress(1.0, "cached layout")
            return whole.WholeMap(coords, hidden, final=True, stage="umap", cached=True)
    ctx.check(WHAT)
    child = Child(child_command(model, params, cache_dir), niced=True)
    child.kill_on_cancel(ctx)  # ends the blocking reads below with end-of-file
    try:
        result = _follow(child, model.rows, hidden, ctx, on_picture or ctx.partial)
        child.wait()
        ctx.check(WHAT)
        if result is None:
            raise ExplorerError(f"could not lay out the whole vocabulary: {child.last_error()}")
        return result
    finally:
        child.close()


def _coords(buffer: bytes, rows: int) -> np.ndarray:
    if len(buffer) != rows * 2 * 4:
        raise ExplorerError("the model file changed on disk while it was mapped; reopen it")
    return np.frombuffer(buffer, dtype=np.float32).reshape(rows, 2).copy()


def _follow(
    child: Child,
    rows: int,
    hidden: np.ndarray,
    ctx: JobContext,
    on_picture: Callable[[whole.WholeMap], None],
) -> whole.WholeMap | None:
    """The child's messages until its final layout (None if it ends without one)."""
    while True:
        try:
            header, buffers = child.receive()
        except (EOFError, ValueError, OSError):
            return None
        op = header.get("op")
        if op == "progress":
            ctx.progress(float(header["fraction"]), str(header.get("text", "")))
        elif op == "picture":
            seconds = dict(header.get("seconds", {}))
            on_picture(
                whole.WholeMap(_coords(buffers[0], rows), hidden, False, "pca", seconds=seconds)
            )
        elif op == "done":
            seconds = dict(header.get("seconds", {}))
            return whole.WholeMap(_coords(buffers[0], rows), hidden, True, "umap", seconds=seconds)


class _Reporter(JobContext):
    """In the child: progress and the first picture as messages to the parent."""

    def __init__(self) -> None:
        super().__init__()
        self.out = reply_channel()
        self._last = (-1.0, "")

    def progress(self, fraction: float, text: str = "") -> None:
        now = (round(float(fraction), 3), text)
        if now != self._last:  # many blocks report the same rounded fraction
            self._last = now
            write_message(self.out, {"op": "progress", "fraction": now[0], "text": text})

    def partial(self, value: object) -> None:
        if isinstance(value, whole.WholeMap):
            write_message(self.out, {"op": "picture", "seconds": value.seconds}, [value.coords])


def main(argv: list[str] | None = None) -> int:
    from explorer.core.map.projection import configure_numba_cache
    from explorer.core.model.open import open_model

    path, tensor, cache_dir, params_json = (argv if argv is not None else sys.argv[1:])[:4]
    tuning.lower_priority()  # (started niced on Linux; elsewhere only from here)
    configure_numba_cache()
    report = _Reporter()
    try:
        params = whole.WholeParams(**json.loads(params_json))
        model = open_model(path, tensor=tensor, tokenizer=False)
        result = whole.whole_map(model, params, report, Path(cache_dir), use_cache=False)
    except ExplorerError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    write_message(report.out, {"op": "done", "seconds": result.seconds}, [result.coords])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
