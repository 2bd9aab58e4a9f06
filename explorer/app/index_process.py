"""Build the fast neighbour index in a child process, so that the window never waits for it.

Building runs LAPACK routines (`numpy.linalg.qr`) that hold the GIL for seconds on a
248k-row matrix; in a worker *thread* that freezes the GUI thread just as surely as running it
there. A child process (explorer/app/child.py) writes the index to the cache folder, reporting
progress as messages; the app then loads the cached index (a memory map, instant). Cancelling
kills the child.

    python -m explorer.app.index_process MODEL_PATH TENSOR CACHE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer.app import tuning
from explorer.app.child import Child, can_spawn, reply_channel, write_message
from explorer.core.context import JobContext
from explorer.core.errors import ExplorerError
from explorer.core.search.neighbors import NeighborSearcher

PROGRESS_TEXT = "Building the fast neighbour index"


def child_command(searcher: NeighborSearcher) -> list[str]:
    model = searcher.model
    return [
        sys.executable,
        "-m",
        "explorer.app.index_process",
        str(model.path),
        model.tensor,
        str(searcher.cache_dir),
    ]


def build_in_child(searcher: NeighborSearcher, ctx: JobContext) -> None:
    """Report progress while a child process builds the index; then load it into `searcher`.
    Cancelling `ctx` kills the child (from whichever thread cancels) and raises Cancelled."""
    work = ctx.part(0.0, 1.0, PROGRESS_TEXT)
    if searcher.load_cached_fast_index():
        return
    if not can_spawn():  # build in this process
        searcher.build_fast_index(work)
        return
    ctx.check("index build")
    child = Child(child_command(searcher), niced=True)
    child.kill_on_cancel(ctx)  # ends the blocking read below with end-of-file
    try:
        _follow(child, work)
        code = child.wait()
        ctx.check("index build")
        if code != 0:
            raise ExplorerError(f"could not build the fast neighbour index: {child.last_error()}")
    finally:
        child.kill()
        if child.wait() != 0:  # a killed child leaves its half-written index behind
            from explorer.core.search import build as search_build  # (numba: not on the GUI)

            final = search_build.folder_for(searcher.model, searcher.cache_dir)
            search_build.remove_partial_builds(final)
        child.close()
    if not searcher.load_cached_fast_index():
        raise ExplorerError("the fast neighbour index was built but cannot be read back")


def _follow(child: Child, ctx: JobContext) -> None:
    """The child's progress messages, until it ends (end-of-file)."""
    while True:
        try:
            header, _ = child.receive()
        except (EOFError, ValueError, OSError):
            return
        if header.get("op") == "progress":
            ctx.progress(float(header["fraction"]))


class _Reporter(JobContext):
    """In the child: progress as messages to the parent."""

    def __init__(self) -> None:
        super().__init__()
        self._out = reply_channel()

    def progress(self, fraction: float, text: str = "") -> None:
        write_message(self._out, {"op": "progress", "fraction": round(float(fraction), 4)})


def main(argv: list[str] | None = None) -> int:
    from explorer.core.model.open import open_model

    path, tensor, cache_dir = (argv if argv is not None else sys.argv[1:])[:3]
    tuning.lower_priority()  # (started niced on Linux; elsewhere only from here)
    report = _Reporter()
    try:
        model = open_model(path, tensor=tensor, tokenizer=False)
        searcher = NeighborSearcher(model, cache_dir=Path(cache_dir))
        searcher.build_fast_index(report)
    except ExplorerError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
