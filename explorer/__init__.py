"""Embedding Explorer: look inside the token-embedding matrix of a language model.

The Python API (docs/python.md)::

    import explorer
    m = explorer.open("path/to/model")  # a folder, a file, a cached HF repo id, an Ollama name
    m.neighbors("cat").texts  # ['cats', 'kitten', …]

Names load on first use, so `import explorer` imports neither the model readers nor Qt.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)

__version__ = "0.1.0"

__all__ = [
    "Cancelled",
    "Comparison",
    "ExplorerError",
    "Head",
    "JobContext",
    "Map",
    "Model",
    "Neighbor",
    "Neighbors",
    "Stats",
    "Token",
    "Tokens",
    "__version__",
    "open",
]

_WHERE = {
    "open": "explorer.api.model",
    "Model": "explorer.api.model",
    "Comparison": "explorer.api.results",
    "Head": "explorer.api.results",
    "Map": "explorer.api.results",
    "Neighbor": "explorer.api.results",
    "Neighbors": "explorer.api.results",
    "Stats": "explorer.api.results",
    "Token": "explorer.api.tokens",
    "Tokens": "explorer.api.tokens",
    "JobContext": "explorer.core.context",
    "Cancelled": "explorer.core.errors",
    "ExplorerError": "explorer.core.errors",
}

if TYPE_CHECKING:
    from typing import Any

    from explorer.api.model import Model, open
    from explorer.api.results import (
        Comparison,
        Head,
        Map,
        Neighbor,
        Neighbors,
        Stats,
    )
    from explorer.api.tokens import Token, Tokens
    from explorer.core.context import JobContext
    from explorer.core.errors import Cancelled, ExplorerError


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'explorer' has no attribute {name!r}")
    value = getattr(import_module(where), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
