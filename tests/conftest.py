import os

# Set before anything imports Qt: tests never need a screen.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault(
    "NUMBA_CACHE_DIR",
    os.path.join(os.path.expanduser("~"), ".cache", "embedding-explorer", "numba"),
)
