"""numba cache locator for the frozen app, named by the runtime hook.

Frozen modules carry source paths relative to the bundle (`umap/layouts.py`), which numba's own
locators cannot find, so they fell back to ~/.cache/numba. Resolving them inside the bundle (the
.py files are collected next to the bytecode) lets NUMBA_CACHE_DIR, the app's user cache folder,
hold every compiled function; the bundle itself is never written to.
"""

import os
import sys

from numba.core.caching import UserProvidedCacheLocator


class FrozenSourceLocator(UserProvidedCacheLocator):
    @classmethod
    def from_function(cls, py_func, py_file):
        base = getattr(sys, "_MEIPASS", None)
        if base and not os.path.isabs(py_file):
            py_file = os.path.join(base, py_file)
        return super().from_function(py_func, py_file)
