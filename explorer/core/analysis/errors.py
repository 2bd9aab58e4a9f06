"""Errors of the analyses, each with a message a user can act on."""

from explorer.core.errors import ExplorerError


class AnalysisError(ExplorerError):
    """An analysis cannot run on this model or with these arguments."""


class SessionError(ExplorerError):
    """A session file cannot be read or written."""
