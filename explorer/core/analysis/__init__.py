"""Analyses of a whole embedding matrix (Qt-free): statistics, under-trained tokens, token kinds,
input vs output head, the one-hot product, two-model comparison and the session file format.

Every computation that reads the whole matrix streams it in blocks (`blocks.py`), accepts
``cancelled`` / ``progress`` callbacks so that the GUI can run it as a cancellable job, and
returns a plain dataclass with ``as_dict()`` for JSON.
"""
