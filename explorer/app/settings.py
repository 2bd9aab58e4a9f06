"""Remembered things (QSettings): recent models, the text of the text pane. Window geometry is
saved by the window itself."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from PySide6.QtCore import QSettings

from explorer.app.errands import FIRE_AND_FORGET

RECENT_KEY = "recent/models"
MAX_RECENT = 10
TEXT_KEY = "text/last"
MAX_SAVED_TEXT = 100_000  # characters; a longer paste is not kept between launches


def write_soon(settings: QSettings, key: str, update: Callable[[object], object]) -> Future:
    """Set `key` to `update(its current value)` and write the settings file, on the errand
    thread: QSettings.sync() waits for the disk twice (fdatasync; 2-29 ms measured with the disk
    busy), and a setValue on the GUI thread's own QSettings would sync there on the next
    event-loop turn. The update reads the value on that thread, after every earlier write. Other
    QSettings objects of the process see the value once the write has run."""
    name, fmt = settings.fileName(), settings.format()

    def write() -> None:
        own = QSettings(name, fmt)
        own.setValue(key, update(own.value(key)))
        own.sync()

    return FIRE_AND_FORGET.submit(write)


def wait_for_writes() -> None:
    """Block until every write asked for so far is on disk (before the process ends)."""
    FIRE_AND_FORGET.wait()


def path_list(value) -> list[str]:
    """A list of paths as QSettings returns it (one item comes back as a plain string)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return []
    return [str(v) for v in value if v]


def put_first(items: list[str], path: str | Path) -> list[str]:
    """`path` (absolute) first, then the others without it, at most MAX_RECENT."""
    entry = str(Path(path).expanduser().resolve())
    return ([entry] + [p for p in items if p != entry])[:MAX_RECENT]


def paths(settings: QSettings, key: str) -> list[str]:
    """The list of paths stored under `key` (recent models, recent sessions)."""
    return path_list(settings.value(key, []))


def add_path(settings: QSettings, key: str, path: str | Path) -> list[str]:
    """Put `path` first in the list under `key`; returns the list for the menu (the file is
    written on the settings writer)."""
    write_soon(settings, key, lambda old: put_first(path_list(old), path))
    return put_first(paths(settings, key), path)


def recent_models(settings: QSettings) -> list[str]:
    return paths(settings, RECENT_KEY)


def add_recent(settings: QSettings, path: str | Path) -> list[str]:
    return add_path(settings, RECENT_KEY, path)


def clear_recent(settings: QSettings) -> None:
    write_soon(settings, RECENT_KEY, lambda _old: [])


def last_text(settings: QSettings) -> str | None:
    """The text pane's text when the window last closed; None if it was never saved."""
    value = settings.value(TEXT_KEY)
    return value if isinstance(value, str) else None


def save_text(settings: QSettings, text: str) -> None:
    if len(text) <= MAX_SAVED_TEXT:
        settings.setValue(TEXT_KEY, text)
        settings.sync()
