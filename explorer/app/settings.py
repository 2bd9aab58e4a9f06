"""Remembered things (QSettings): recent models. Window geometry is saved by the window itself."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

RECENT_KEY = "recent/models"
MAX_RECENT = 10


def recent_models(settings: QSettings) -> list[str]:
    value = settings.value(RECENT_KEY, [])
    if isinstance(value, str):  # QSettings returns a single-item list as a plain string
        value = [value]
    if not isinstance(value, list | tuple):
        return []
    return [str(v) for v in value if v]


def add_recent(settings: QSettings, path: str | Path) -> list[str]:
    """Put `path` first in the recent list (absolute, no duplicates, at most MAX_RECENT)."""
    entry = str(Path(path).expanduser().resolve())
    items = [entry] + [p for p in recent_models(settings) if p != entry]
    items = items[:MAX_RECENT]
    settings.setValue(RECENT_KEY, items)
    settings.sync()
    return items


def clear_recent(settings: QSettings) -> None:
    settings.setValue(RECENT_KEY, [])
    settings.sync()
