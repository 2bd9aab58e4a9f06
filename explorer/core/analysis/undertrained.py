"""Suspicious (possibly under-trained, "glitch") tokens from per-row figures of one streaming pass.

Following *Fishing for Magikarp* (Land & Bartolo, 2024): rows of tokens the model never saw in
training keep their initialisation or drift together, so a token whose row sits close to the mean
of known-unused rows is suspect. Reasons, in order of the list:

- ``zero``: the row is all zeros (score: its norm, 0);
- ``nonfinite``: the row holds NaN or inf (score: null);
- ``tiny_norm`` / ``huge_norm``: the log of the norm lies more than `NORM_Z` robust standard
  deviations (median ± k·1.4826·MAD) below / above the median (score: that robust z). A tail
  that holds more than `GROUP_SHARE` of the rows is a group, not a few outliers (a WordPiece
  vocabulary keeps its rare ``##`` pieces, CJK among them, near their initial scale): then only
  rows beyond the same fence drawn around that group are listed, and the group is counted
  (``norm_groups``);
- ``near_unused``: cosine to the mean of known-unused rows beyond the same robust fence above
  the median (a group again only beyond the group's own fence) and at least 0.5 (score: the
  cosine).

Known-unused rows (ids beyond the tokenizer, ``<unused…>``, ``[unused…]`` and
``reserved_special_token`` pieces) are the reference, so they are not listed themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.analysis.dimensions import robust_z
from explorer.core.analysis.kinds import UNUSED_PIECE

NORM_Z = 4.0
GROUP_SHARE = 0.005  # a norm tail holding more of the rows than this is a group of its own
NEAR_UNUSED_MIN_COSINE = 0.5
REASONS = ("zero", "nonfinite", "tiny_norm", "huge_norm", "near_unused")


@dataclass(frozen=True)
class Suspicious:
    id: int
    piece: str | None
    reason: str
    score: float | None

    def as_dict(self) -> dict:
        return {"id": self.id, "piece": self.piece, "reason": self.reason, "score": self.score}


def known_unused_ids(model) -> np.ndarray:
    """Rows the model cannot have trained: beyond the tokenizer, or placeholder pieces."""
    if model.tokenizer is None:
        return np.zeros(0, dtype=np.int64)
    unused = ~np.asarray(model.used_rows)
    pieces = model.tokenizer.pieces[: model.rows]
    for i, piece in enumerate(pieces):
        if piece is not None and piece[:1] in "<[" and UNUSED_PIECE.match(piece):
            unused[i] = True
    return np.flatnonzero(unused).astype(np.int64)


def unused_mean(model, ids: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Mean of the finite known-unused rows in float64 (zeros if there are none)."""
    total = np.zeros(model.dim, dtype=np.float64)
    n = 0
    for start in range(0, len(ids), chunk):
        rows = model.vectors(ids[start : start + chunk]).astype(np.float64)
        ok = np.isfinite(rows).all(axis=1)
        total += rows[ok].sum(axis=0)
        n += int(ok.sum())
    return total / n if n else total


def unused_cosine(refdot: np.ndarray, sq: np.ndarray, ref: np.ndarray) -> np.ndarray | None:
    """Cosine of every row to the reference (mean unused row); None if there is no reference."""
    ref_norm = float(np.linalg.norm(ref))
    if not ref_norm > 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = refdot / (np.sqrt(sq) * ref_norm)
    return np.where(np.isfinite(cos) & (sq > 0), cos, np.nan)


def _tail(values: np.ndarray, rows: np.ndarray, side: int) -> tuple[np.ndarray, int]:
    """The rows (bool) whose value lies beyond median ± NORM_Z robust deviations on `side`
    (-1 below, +1 above), and the size of the group that tail is when it is one (else 0)."""
    z = side * robust_z(np.where(rows, values, np.nan))
    tail = rows & (z >= NORM_Z)
    if tail.sum() <= GROUP_SHARE * rows.sum():
        return tail, 0
    # many rows share that value: a mode of its own; only rows far from it too are outliers
    within = side * robust_z(np.where(tail, values, np.nan))
    return tail & (within >= NORM_Z), int(tail.sum())


def norm_groups(
    sq: np.ndarray, cosine: np.ndarray | None, candidates: np.ndarray
) -> tuple[int, int, int]:
    """How many rows form a group of small norms, of large norms, and of rows close to the
    unused rows (0: no such group). A group is a trait of the vocabulary, not a list of
    glitches: its rows are not listed as suspicious."""
    nonzero = candidates & np.isfinite(sq) & (sq > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_norms = 0.5 * np.log(sq)
    near = 0
    if cosine is not None:
        valid = nonzero & np.isfinite(cosine)
        near = _tail(np.where(valid, cosine, np.nan), valid, +1)[1]
    return _tail(log_norms, nonzero, -1)[1], _tail(log_norms, nonzero, +1)[1], near


def find_suspicious(
    sq: np.ndarray,
    cosine: np.ndarray | None,
    candidates: np.ndarray,
    pieces: list[str | None] | None,
) -> list[Suspicious]:
    """The suspicious rows among `candidates` (bool [rows]), ordered by reason then severity."""
    norms = np.sqrt(sq)
    finite = np.isfinite(sq)
    zero = candidates & (sq == 0)
    nonzero = candidates & finite & (sq > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = robust_z(np.where(nonzero, np.log(norms), np.nan))
    found: dict[str, tuple[np.ndarray, np.ndarray]] = {
        "zero": (np.flatnonzero(zero), np.zeros(int(zero.sum()))),
        "nonfinite": (
            np.flatnonzero(candidates & ~finite),
            np.full(int((candidates & ~finite).sum()), np.nan),
        ),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        log_norms = np.log(norms)
    tiny = np.flatnonzero(_tail(log_norms, nonzero, -1)[0])
    huge = np.flatnonzero(_tail(log_norms, nonzero, +1)[0])
    found["tiny_norm"] = (tiny[np.argsort(z[tiny], kind="stable")], np.sort(z[tiny]))
    found["huge_norm"] = (huge[np.argsort(-z[huge], kind="stable")], -np.sort(-z[huge]))
    if cosine is not None:
        valid = nonzero & np.isfinite(cosine)
        if valid.any():
            close = _tail(np.where(valid, cosine, np.nan), valid, +1)[0]
            near = np.flatnonzero(close & (cosine >= NEAR_UNUSED_MIN_COSINE))
            near = near[np.argsort(-cosine[near], kind="stable")]
            found["near_unused"] = (near, cosine[near])
    out = []
    for reason in REASONS:
        ids, scores = found.get(reason, (np.zeros(0, np.int64), np.zeros(0)))
        for i, s in zip(ids.tolist(), scores.tolist(), strict=True):
            piece = pieces[i] if pieces is not None and i < len(pieces) else None
            out.append(Suspicious(int(i), piece, reason, None if not np.isfinite(s) else float(s)))
    return out
