"""Checks on what a model file declares, before any per-row table is sized from it."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.core.errors import ModelFormatError


def check_embedding_shape(file_name: str, tensor: str, shape: Sequence[int]) -> None:
    """A usable embedding has at least one row and one column.

    A 0-byte tensor can declare any row count ([100000000, 0] fits in 96 bytes); every per-row
    table (used rows, labels, norms) would then be sized from a number the file does not back.
    A tensor with data is bounded by the file size, which the header parser already checked.
    """
    if len(shape) == 2 and (shape[0] == 0 or shape[1] == 0):
        shown = tensor if len(tensor) <= 60 else tensor[:59] + "…"
        raise ModelFormatError(
            f"{file_name}: tensor {shown!r} has shape {list(shape)} and holds no data, "
            "so it cannot be an embedding; pick another with --tensor NAME"
        )
