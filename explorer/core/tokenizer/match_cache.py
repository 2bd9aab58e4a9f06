"""The tokenizer check's verdict kept in the user cache, so a model is judged once.

The check reads a few thousand rows and decodes every piece of the vocabulary (about half of
`info` on a 262k vocabulary). Its verdict depends only on the matrix and the tokenizer, so an
entry is keyed by the tensor's file identity (`cache.file_key`: path, size, mtime, hashed first
and last blocks, tensor, shape, dtype), the tokenizer's file identity and the check's version.
It is written atomically and every field is checked when read; an entry that fails is ignored
and the check runs again and rewrites it.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from explorer.core import cache
from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.tokenizer.verdict import Verdict

KIND = "tokenizer-match"
VERSION = 1  # raise when the check's thresholds or method change
VERDICTS = ("matches", "shifted", "mismatch", "unknown")
_TYPES = {
    "verdict": (str,),
    "offset": (int, type(None)),
    "sentence": (str,),
    "pairs": (int,),
    "variant_cosine": (float, type(None)),
    "random_cosine": (float, type(None)),
    "auc": (float, type(None)),
    "shifted_auc": (float, type(None)),
    "untrained_rows": (int,),
    "untrained_norm": (float, type(None)),
    "untrained_cohesion": (float, type(None)),
    "rows_read": (int,),
}
assert set(_TYPES) == {f.name for f in fields(Verdict)}


def key_of(model, tokenizer_identity: dict) -> dict | None:
    """The entry's key, or None when the model's file cannot be identified (nothing cached)."""
    try:
        return cache.file_key(model, KIND, {"version": VERSION, "tokenizer": tokenizer_identity})
    except (OSError, ValueError, AttributeError):
        return None


def _sound(value: object, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, allowed) or (float in allowed and isinstance(value, int))


def verdict_from(data: object) -> Verdict | None:
    """The Verdict a cached dict describes, or None unless every field is there and sound."""
    if not isinstance(data, dict) or set(data) != set(_TYPES):
        return None
    if not all(_sound(data[name], allowed) for name, allowed in _TYPES.items()):
        return None
    if data["verdict"] not in VERDICTS or data["pairs"] < 0 or data["rows_read"] < 0:
        return None
    floats = {n for n, allowed in _TYPES.items() if float in allowed and data[n] is not None}
    values: dict = {n: float(v) if n in floats else v for n, v in data.items()}
    return Verdict(**values)


def load(root: Path, key: dict) -> Verdict | None:
    found, _ = cache.load(root, key, {})
    return None if found is None else verdict_from(found.extra.get("verdict"))


def save(root: Path, key: dict, verdict: Verdict) -> None:
    cache.save(root, key, {}, extra={"verdict": verdict.as_dict()})


def check_model(
    model, ctx: JobContext = NULL_CONTEXT, cache_dir: Path | None = None
) -> Verdict | None:
    """`match.check_model` for the model's own tokenizer, kept in the user cache (`cache_dir`)
    for this matrix and tokenizer file; None without a tokenizer."""
    from explorer.core.tokenizer import match

    if model.tokenizer is None:
        return None
    identity = getattr(model.tokenizer, "identity", None)
    key = key_of(model, identity) if isinstance(identity, dict) else None
    root = cache.default_cache_dir() if cache_dir is None else cache_dir
    if key is not None:
        found = load(root, key)
        if found is not None:
            return found
    verdict = match.check_model(model, ctx=ctx)
    if key is not None and verdict is not None:
        save(root, key, verdict)
    return verdict
