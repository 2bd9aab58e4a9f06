"""One lock around every parallel numba launch in the process.

numba's fallback "workqueue" threading layer aborts on concurrent launches from two threads
(GUI search lane + index build); one lock per process keeps every layer safe.
"""

from __future__ import annotations

import threading

KERNEL_LOCK = threading.Lock()
