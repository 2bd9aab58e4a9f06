"""Exceptions with messages a user can act on. The CLI and GUI show them as one line."""

# An error line longer than this is cut in the middle: the start says what failed, the end
# usually says what to do, and a 10,000-character phrase in between helps nobody.
MAX_ERROR_CHARS = 300


class ExplorerError(Exception):
    """Base class for every error caused by bad input (files, ids, text, expressions)."""


class ModelFormatError(ExplorerError):
    """A model file is missing, malformed, truncated or inconsistent."""


class ModelChangedError(ModelFormatError):
    """A model file was truncated, replaced or rewritten after it was opened."""


class PickleRefusedError(ExplorerError):
    """A pickle-based checkpoint was given; it is never unpickled."""


class TokenError(ExplorerError):
    """A token id, token text or input text cannot be used."""


class Cancelled(Exception):  # reads better at the raise site
    """Raised inside a job when its caller cancelled it."""


def shown(value: object, limit: int = 60) -> str:
    """repr of user input for an error message, cut short so that it cannot flood a line."""
    text = value if isinstance(value, str) else repr(value)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(error: BaseException | str, limit: int = MAX_ERROR_CHARS) -> str:
    """The message as one line of at most `limit` characters (what the CLI and GUI show)."""
    text = " ".join(str(error).split()) or type(error).__name__
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 3
    return f"{text[:head]} … {text[-tail:]}"


class AnalysisError(ExplorerError):
    """An analysis cannot run on this model or with these arguments."""


class SessionError(ExplorerError):
    """A session file cannot be read or written."""
