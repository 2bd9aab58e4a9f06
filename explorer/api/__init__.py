"""The public Python API's implementation; `import explorer` re-exports it (explorer/__init__.py).

`model` holds `open` and `Model`, `rows` the lazy matrix view `Model.E`, `results` the result
dataclasses, `progress` the `progress=` argument of long calls, `html` the notebook tables.
Each module imports the core only where a call needs it, so that `import explorer` stays cheap.
"""
