"""`Tokens`, what `Model.tokenize` returns, in a module of its own: the `tokenize` command loads
it without the other results' dataclasses (each costs about a millisecond to create)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.core.tokenizer.text import Token

if TYPE_CHECKING:
    import pandas as pd


def frame(columns: dict[str, Any]) -> pd.DataFrame:
    """A DataFrame of `columns`; a clear ImportError when pandas is not installed."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install pandas") from None
    return pd.DataFrame(columns)


class Tokens(list[Token]):
    """The tokens of a text, in order: a list of `Token` (id, piece, text, bytes, start, end)."""

    @property
    def ids(self) -> np.ndarray:
        return np.fromiter((t.id for t in self), dtype=np.int64, count=len(self))

    def to_pandas(self) -> pd.DataFrame:
        return frame(
            {
                "id": self.ids,
                "piece": [t.piece for t in self],
                "text": [t.text for t in self],
                "bytes": [t.bytes for t in self],
                "start": [t.start for t in self],
                "end": [t.end for t in self],
            }
        )

    def _repr_html_(self) -> str:
        from explorer.api import html

        rows = ((t.id, t.text, t.bytes.hex(" "), f"{t.start}:{t.end}") for t in self)
        return html.table(("id", "token", "bytes", "chars"), rows, len(self), f"{len(self)} tokens")
