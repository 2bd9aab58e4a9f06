# PyInstaller runtime hook: numba compiles into the user cache folder, never into the bundle
# (the folder explorer.core.map.umap.numba_cache_dir() names), before anything imports numba.
import os

from platformdirs import user_cache_dir

CACHE = os.path.join(user_cache_dir("embedding-explorer"), "numba")
os.environ.setdefault("NUMBA_CACHE_DIR", CACHE)
os.environ.setdefault(
    "NUMBA_CACHE_LOCATOR_CLASSES", "frozen_numba_locator.FrozenSourceLocator,UserWideCacheLocator"
)
