"""What the benchmarks share. `python bench/NAME.py` puts bench/ first on sys.path, so a script
imports these as `from lib.window import open_window`; `explorer` is the installed package."""
