"""Remembered things (QSettings): recent models, the text of the text pane. Window geometry is
saved by the window itself."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QSettings

RECENT_KEY = "recent/models"
MAX_RECENT = 10
TEXT_KEY = "text/last"
MAX_SAVED_TEXT = 100_000  # characters; a longer paste is not kept between launches
# One writer, so that writes land in the order they were asked for.
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="settings-writer")


def write_soon(settings: QSettings, key: str, value) -> Future:
    """Set `key` and write the settings file on a thread of its own. QSettings.sync() waits for
    the disk twice (fdatasync): on the GUI thread it froze the window for 420 ms while the index
    build read the model file from disk. (A setValue on the GUI thread's own object would sync
    there on the next event-loop turn.) Every QSettings of the process sees the value once the
    write has run: use what this was given until then."""
    name, fmt = settings.fileName(), settings.format()

    def write() -> None:
        own = QSettings(name, fmt)
        own.setValue(key, value)
        own.sync()

    return _WRITER.submit(write)


def wait_for_writes() -> None:
    """Block until every write asked for so far is on disk (before the process ends)."""
    _WRITER.submit(lambda: None).result()


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
    write_soon(settings, RECENT_KEY, items)
    return items


def clear_recent(settings: QSettings) -> None:
    write_soon(settings, RECENT_KEY, [])


def last_text(settings: QSettings) -> str | None:
    """The text pane's text when the window last closed; None if it was never saved."""
    value = settings.value(TEXT_KEY)
    return value if isinstance(value, str) else None


def save_text(settings: QSettings, text: str) -> None:
    if len(text) <= MAX_SAVED_TEXT:
        settings.setValue(TEXT_KEY, text)
        settings.sync()
