"""Work the GUI thread hands off and never waits for (writing the settings file, reaping an old
tokenizer child), on one long-lived thread started with the app.

``threading.Thread.start`` waits until the new thread has run: started from the GUI thread as a
model opened, with both cores busy, that wait took 26 ms of the window's time (the settings
writer's first write started its thread then; each switch of models started a reaper).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class Errands:
    """Calls run in the order given, on one thread that lives as long as the process."""

    def __init__(self, name: str):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def start(self) -> None:
        """Start the thread now (at start-up), not on the first errand."""
        self._pool.submit(lambda: None)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        return self._pool.submit(fn, *args)

    def wait(self) -> None:
        """Block until every errand given so far has run."""
        self._pool.submit(lambda: None).result()


# Everything the GUI thread hands off and never waits for, in the order given: the settings
# file's writes (so they land in the order asked) and reaping an old tokenizer child (a dying
# child can take 150 ms to exit). (Niced children are forked on a thread of their own, which must
# stay niced: explorer/app/child.py.)
FIRE_AND_FORGET = Errands("errands")


def start_threads() -> None:
    """Start the errand thread (the GUI entry point calls it through tuning.tune_process)."""
    FIRE_AND_FORGET.start()
