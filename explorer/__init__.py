"""Embedding Explorer: look inside the token-embedding matrix of a language model."""

__version__ = "0.1.0"
