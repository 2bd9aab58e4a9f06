"""Exceptions with messages a user can act on. The CLI and GUI show them as one line."""


class ExplorerError(Exception):
    """Base class for every error caused by bad input (files, ids, text, expressions)."""


class ModelFormatError(ExplorerError):
    """A model file is missing, malformed, truncated or inconsistent."""


class PickleRefusedError(ExplorerError):
    """A pickle-based checkpoint was given; it is never unpickled."""


class TokenError(ExplorerError):
    """A token id, token text or input text cannot be used."""


class Cancelled(Exception):  # reads better at the raise site
    """Raised inside a job when its caller cancelled it."""
