"""Two files of one model: the same vocabulary, row for row."""

from __future__ import annotations

from explorer.core.errors import AnalysisError


class MisalignedError(AnalysisError):
    """Two models whose rows do not hold the same tokens in the same order."""


def check_aligned(ref, other) -> None:
    """Raise MisalignedError unless `other` holds `ref`'s vocabulary row for row: the same
    number of rows and values per row, and (where both have a tokenizer) the same vocabulary
    size and the same piece for each id."""
    a, b = ref.path.name, other.path.name
    if (ref.rows, ref.dim) != (other.rows, other.dim):
        raise MisalignedError(
            f"{a} is {ref.rows:,} × {ref.dim} but {b} is {other.rows:,} × {other.dim}: "
            "not one embedding at two precisions"
        )
    ta, tb = ref.tokenizer, other.tokenizer
    if ta is None or tb is None:
        return  # nothing more to compare: the shapes agree
    if ta.vocab_size != tb.vocab_size:
        raise MisalignedError(
            f"{a} has a vocabulary of {ta.vocab_size:,} tokens but {b} has {tb.vocab_size:,}: "
            "their rows are not the same tokens"
        )
    pa, pb = ta.pieces, tb.pieces
    for i in range(min(ref.rows, max(len(pa), len(pb)))):
        x = pa[i] if i < len(pa) else None
        y = pb[i] if i < len(pb) else None
        if x != y:
            raise MisalignedError(
                f"row {i} is {x!r} in {a} but {y!r} in {b}: the vocabularies do not align "
                "row for row"
            )
