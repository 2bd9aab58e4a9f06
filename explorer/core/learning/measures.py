"""Neighbours inside a small table, and the numbers that say whether a table has learned."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.core.ranking import top_k_rows

# English function words; a learned table should set them apart from content words.
FUNCTION_WORDS = (
    "the a an of to in on at by for from with into onto about as than then that this these those "
    "it its they them their there he she we you i is are was were be been being has have had do "
    "does did not no nor and or but if so such both either neither whether while when where "
    "which what who whom whose how why can could may might must shall should will would all any "
    "each every some other another same only also very more most less just even still yet "
    "because after before between through without within upon until since though although"
).split()


def unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def table_neighbors(
    table: np.ndarray, queries: Sequence[int] | np.ndarray, k: int, among: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Indices [nq, k] and cosines of each query row's nearest rows of `table` (itself left
    out), searching only the first `among` rows when given."""
    x = unit_rows(table if among is None else table[:among])
    q = np.asarray(queries, dtype=np.int64)
    sims = unit_rows(table[q]) @ x.T
    in_range = q < len(x)
    sims[np.flatnonzero(in_range), q[in_range]] = -np.inf
    k = min(k, len(x) - 1)
    top = top_k_rows(sims, k)
    return top, np.take_along_axis(sims, top, axis=1)


def overlap(na: np.ndarray, nb: np.ndarray, k: int) -> float:
    """Mean share of shared entries between matching rows of two neighbour lists [nq, k] (the
    agreement of two tables: their neighbours of the same queries, same vocabulary)."""
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(na, nb, strict=True)]))


def class_purity(table: np.ndarray, flags: np.ndarray, k: int) -> float:
    """Among the rows of `table`, the mean share of each row's k nearest rows that carry the same
    flag (function word or not), balanced over the two classes so either class counts half."""
    idx, _ = table_neighbors(table, np.arange(len(table)), k)
    same = (flags[idx] == flags[:, None]).mean(axis=1)
    if flags.all() or not flags.any():
        return float(same.mean())
    return float(0.5 * same[flags].mean() + 0.5 * same[~flags].mean())


def function_word_flags(labels: Sequence[str]) -> np.ndarray:
    """True where a readable token label (leading space marks ␣ stripped) is a function word."""
    words = set(FUNCTION_WORDS)
    return np.array([lab.replace("␣", " ").strip().lower() in words for lab in labels], dtype=bool)
