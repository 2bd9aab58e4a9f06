"""Driving the real window from a bench script: run its event loop until something holds."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(app, cond: Callable[[], bool], timeout: float) -> None:
    """Process the window's events, a millisecond apart, until `cond()` holds; TimeoutError
    after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.001)
