"""Build the fast neighbour index in a child process, so that the window never waits for it.

Building runs LAPACK routines (`numpy.linalg.qr`) that hold the GIL for seconds on a
248k-row matrix; in a worker *thread* that freezes the GUI thread just as surely as running it
there. A child process writes the index to the cache folder, reporting progress on stdout; the
app then loads the cached index (a memory map, instant). Cancelling kills the child.

    python -m explorer.app.index_process MODEL_PATH TENSOR CACHE_DIR
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from explorer.app import tuning
from explorer.core.context import CancellableContext
from explorer.core.errors import Cancelled, ExplorerError
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


def build_in_child(
    searcher: NeighborSearcher, ctx: CancellableContext
) -> Iterator[tuple[str, float]]:
    """Yield progress while a child process builds the index; then load it into `searcher`.
    Cancelling `ctx` kills the child (from whichever thread cancels) and raises Cancelled."""
    if searcher.load_cached_fast_index():
        return
    if getattr(sys, "frozen", False):  # a frozen app cannot run `-m`: build in this process
        for fraction in searcher.build_fast_index(cancelled=ctx.cancelled):
            yield PROGRESS_TEXT, fraction
        return
    if ctx.cancelled():
        raise Cancelled("index build cancelled")
    env = tuning.background_env()
    # stderr to a file, not a pipe: a child that writes much there can never block on it
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
        proc = tuning.start_niced(
            child_command(searcher), stdout=subprocess.PIPE, stderr=errors, text=True, env=env
        )
        ctx.call_on_cancel(proc.kill)  # ends the blocking read below with end-of-file
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("progress "):
                    yield PROGRESS_TEXT, float(line.split()[1])
            code = proc.wait()
            if ctx.cancelled():
                raise Cancelled("index build cancelled")
            if code != 0:
                errors.seek(0)
                err = errors.read().strip()
                last = err.splitlines()[-1] if err else f"exit code {code}"
                raise ExplorerError(f"could not build the fast neighbour index: {last}")
        finally:
            if proc.poll() is None:
                proc.kill()
            if proc.wait() != 0:  # a killed child leaves its half-written index behind
                from explorer.core.search import (
                    build as search_build,  # (numba: never on the GUI thread)
                )

                final = search_build.folder_for(searcher.model, searcher.cache_dir)
                search_build.remove_partial_builds(final)
            if proc.stdout is not None:
                proc.stdout.close()
    if not searcher.load_cached_fast_index():
        raise ExplorerError("the fast neighbour index was built but cannot be read back")


def main(argv: list[str] | None = None) -> int:
    from explorer.core.model.open import open_model

    path, tensor, cache_dir = (argv if argv is not None else sys.argv[1:])[:3]
    tuning.lower_priority()  # (started niced on Linux; elsewhere only from here)
    try:
        model = open_model(path, tensor=tensor, tokenizer=False)
        searcher = NeighborSearcher(model, cache_dir=Path(cache_dir))
        for fraction in searcher.build_fast_index():
            print(f"progress {float(fraction):.4f}", flush=True)
    except ExplorerError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
