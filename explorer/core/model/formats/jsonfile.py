"""JSON side files (config.json, *.safetensors.index.json) read with bounded size and depth."""

from __future__ import annotations

import json
from pathlib import Path

from explorer.core.errors import ModelFormatError
from explorer.core.filecheck import read_limited
from explorer.core.limits import MAX_JSON_BYTES


def load_json(path: str | Path, what: str, limit: int = MAX_JSON_BYTES) -> object:
    """Parse a regular file of at most `limit` bytes; any failure is one ModelFormatError.

    Python's parser recurses once per nesting level and refuses integers of more than 4,300
    digits with ValueError, so both are caught here rather than escaping as tracebacks.
    """
    path = Path(path)
    data = read_limited(path, limit)
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ModelFormatError(f"{path.name}: {what} (nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError is a ValueError
        text = " ".join(str(e).split())
        text = text if len(text) <= 120 else text[:119] + "…"
        raise ModelFormatError(f"{path.name}: {what} ({text})") from None
