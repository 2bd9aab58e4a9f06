"""Does this tokenizer belong to this matrix? Judged from the rows themselves.

The embedding only looks up row ``E[id]``: with another tokenizer every token gets a real-looking
row that belongs to some other token. Spelling variants of one word (``cat`` / ``␣cat`` / ``Cat``
/ ``CAT`` / ``cats``, a WordPiece word and its ``##`` continuation) have close rows when the ids
line up, and rows no closer than random partners when they do not. The check finds a few thousand
variant pairs from the vocabulary alone, reads only their rows, and compares their cosines with
those of the same rows paired at random (AUC). Where that fails it tries small id shifts, and it
reports whether special and never-used tokens' rows look untrained (low norm, or close to their
common mean), as they do when the ids line up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, cast

import numpy as np

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.tokenizer.verdict import Verdict

VARIANT_PAIRS = 2048  # variant pairs scored (rows read: at most twice as many)
SCREEN_PAIRS = 48  # of those, the pairs scored at every id shift…
SHIFT_CANDIDATES = 2  # …and at the likeliest shifts
SHIFT_PAIRS = 256  # the pairs scored there
MAX_SHIFT = 16
MIN_PAIRS = 48  # fewer variant pairs than this: no verdict from them
MATCH_AUC = 0.75  # variant pairs closer than random partners this often: the ids line up
UNTRAINED_SAMPLE = 256
UNTRAINED_NORM = 0.5  # never-used rows this much shorter than word rows look untrained…
UNTRAINED_COHESION = 0.6  # …as do never-used rows this close to their own mean
SEED = 0

_WORD = re.compile(rb"[A-Za-z]{2,}")
# a bracketed piece naming a never-used slot (<unused3>, [unused3], <|reserved_special_token_7|>)
_NEVER_USED = re.compile(rb"[\[<].*?(?:unused|reserved|extra_id|pad|placeholder)", re.IGNORECASE)

Rows = Callable[[np.ndarray], np.ndarray]  # sorted distinct ids -> float32 rows [len(ids), dim]


class _Tokenizer(Protocol):  # what TokenizerInfo and VocabTokenizer both offer
    special_ids: set[int]
    subword_prefix: str
    byte_level: bool

    @property
    def pieces(self) -> Sequence[str | None]: ...

    def piece_bytes(self, token_id: int, piece: str) -> bytes: ...

    def continues_word(self, piece: str) -> bool: ...


@dataclass(frozen=True)
class Vocabulary:
    """What the check reads of a tokenizer: every id's exact bytes (None: no token), whether a
    piece continues a word (WordPiece ``##s``), and the special ids."""

    tokens: Sequence[bytes | None]
    continues: frozenset[int] = frozenset()
    special: frozenset[int] = frozenset()
    word_pieces: bool = False  # WordPiece: a piece without ``##`` starts a word

    @classmethod
    def of(cls, tok: _Tokenizer) -> Vocabulary:
        """From a TokenizerInfo or a VocabTokenizer (worker thread: grows with the vocabulary)."""
        table = getattr(tok, "table", None)
        if table is not None:  # a VocabTokenizer: the bytes and flags are there already
            from explorer.core.tokenizer.vocab_table import CONTINUES, PRESENT

            flags, data, at = table.flags, table.data, table.data_offsets.tolist()
            tokens: list[bytes | None] = [data[a:b] for a, b in zip(at, at[1:], strict=False)]
            for i in np.flatnonzero((flags & PRESENT) == 0).tolist():
                tokens[i] = None
            continues = frozenset(np.flatnonzero(flags & CONTINUES).tolist())
        else:
            pieces = tok.pieces
            tokens = [None if p is None else tok.piece_bytes(i, p) for i, p in enumerate(pieces)]
            wordpiece = bool(tok.subword_prefix) and not tok.byte_level
            continues = frozenset(
                i for i, p in enumerate(pieces) if wordpiece and p and tok.continues_word(p)
            )
        return cls(
            tokens,
            continues,
            frozenset(tok.special_ids),
            word_pieces=bool(tok.subword_prefix) and not tok.byte_level,
        )

    def truncated(self, size: int) -> Vocabulary:
        return Vocabulary(
            self.tokens[:size],
            frozenset(i for i in self.continues if i < size),
            frozenset(i for i in self.special if i < size),
            self.word_pieces,
        )


def _keys(vocab: Vocabulary) -> Sequence[bytes | None]:
    """Every token's bytes with a word start spelled as a leading space, in every scheme."""
    if not vocab.word_pieces:  # byte-level and SentencePiece pieces spell it so already
        return vocab.tokens
    skip = vocab.continues | vocab.special
    return [t if t is None or i in skip else b" " + t for i, t in enumerate(vocab.tokens)]


def _variants(key: bytes) -> list[bytes]:
    space, core = (b" ", key[1:]) if key.startswith(b" ") else (b"", key)
    other = b"" if space else b" "
    out = [other + core]
    for form in {core.lower(), core.capitalize(), core.upper()} - {core}:
        out += [space + form, other + form]
    if core.endswith(b"s") and not core.endswith(b"ss") and len(core) > 3:
        out.append(space + core[:-1])  # a plural and its singular
    elif len(core) >= 3 and not core.endswith(b"s"):
        out.append(space + core + b"s")
    return out


def _random_ids(n: int, seed: int, batch: int = 4096):
    """Every id in [0, n) once, in random order, drawn a batch at a time (the search for pairs
    usually stops after a few thousand)."""
    rng = np.random.default_rng(seed)
    if n <= 4 * batch:
        yield from rng.permutation(n).tolist()
        return
    seen = np.zeros(n, dtype=bool)
    for _ in range(4):  # random draws while most ids are new…
        ids = np.unique(rng.integers(0, n, batch))
        ids = ids[~seen[ids]]
        seen[ids] = True
        yield from rng.permutation(ids).tolist()
    yield from rng.permutation(np.flatnonzero(~seen)).tolist()  # …then the rest


def variant_pairs(vocab: Vocabulary, limit: int = VARIANT_PAIRS, seed: int = SEED) -> np.ndarray:
    """int64 [n, 2]: pairs of ids whose tokens spell one word (space, case, plural, ``##``),
    found from the vocabulary alone, from random starting tokens, at most `limit`."""
    keys = _keys(vocab)
    n = len(keys)
    index = dict(zip(reversed(keys), range(n - 1, -1, -1), strict=True))  # the first id wins
    index.pop(None, None)
    for i in vocab.special:
        if index.get(keys[i]) == i:
            del index[keys[i]]  # type: ignore[arg-type]
    found: set[tuple[int, int]] = set()
    for i in _random_ids(n, seed):
        key = keys[i]
        if key is None or i in vocab.special or not _WORD.fullmatch(key.lstrip(b" ")):
            continue
        for variant in _variants(key):
            j = index.get(variant)
            if j is not None and j != i:
                found.add((min(i, j), max(i, j)))
        if len(found) >= limit:
            break
    pairs = np.array(sorted(found), dtype=np.int64).reshape(-1, 2)
    if len(pairs) > limit:
        keep = np.random.default_rng(seed).choice(len(pairs), limit, replace=False)
        pairs = pairs[np.sort(keep)]
    return pairs


def never_used_ids(vocab: Vocabulary, rows: int) -> np.ndarray:
    """Ids whose rows are never trained when the ids line up: special and never-used tokens
    (``[unused3]``, ``<|reserved_special_token_7|>``), and rows beyond the vocabulary."""
    given = list(vocab.tokens[:rows])
    holes = [i for i, t in enumerate(given) if t is None] if None in given else []
    tokens = cast(list[bytes], given)
    for i in holes:
        tokens[i] = b""
    # the first byte of every piece from the pieces joined: only bracketed ones are looked at
    starts = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, tokens), np.int64, len(tokens)) + 1, out=starts[1:])
    first = np.frombuffer(b"\x00".join(tokens) + b"\x00", dtype=np.uint8)[starts[:-1]]
    bracketed = np.flatnonzero((first == ord("[")) | (first == ord("<"))).tolist()
    ids = {i for i in bracketed if _NEVER_USED.match(tokens[i])}
    ids |= {i for i in vocab.special if i < rows}
    ids |= set(holes)
    found = np.array(sorted(ids), dtype=np.int64)
    return np.concatenate([found, np.arange(len(tokens), rows, dtype=np.int64)])


def _norms(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float32 rows, their L2 norms), rows with a non-finite value zeroed (one pass, where
    nan_to_num took five)."""
    rows = rows.astype(np.float32, copy=False)
    squares = np.einsum("ij,ij->i", rows, rows)
    bad = ~np.isfinite(squares)
    if bad.any():
        rows = rows.copy()
        rows[bad], squares[bad] = 0.0, 0.0
    return rows, np.sqrt(squares)


def _unit(rows: np.ndarray) -> np.ndarray:
    rows, norms = _norms(rows)
    return rows * (1.0 / np.where(norms > 0, norms, 1.0))[:, None]


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(a positive scores above a negative), ties counted half (Mann-Whitney)."""
    both = np.concatenate([pos, neg])
    order = np.argsort(both, kind="mergesort")
    ranks = np.empty(len(both))
    ranks[order] = np.arange(1, len(both) + 1)
    # average the ranks of ties
    sorted_vals = both[order]
    _, first, counts = np.unique(sorted_vals, return_index=True, return_counts=True)
    mean_rank = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(mean_rank, counts)
    n, m = len(pos), len(neg)
    return float((ranks[:n].sum() - n * (n + 1) / 2) / (n * m))


def _partners(n: int, seed: int) -> np.ndarray:
    """A random pairing of n items with none paired to itself (a shuffled roll)."""
    if n < 2:
        return np.arange(n)
    perm = np.random.default_rng(seed).permutation(n)
    rolled = np.empty(n, dtype=np.int64)
    rolled[perm] = perm[np.roll(np.arange(n), 1)]
    return rolled


def _scores(unit_of: Callable[[np.ndarray], np.ndarray], pairs: np.ndarray, seed: int):
    """Cosines of the variant pairs and of the same first rows with random partners."""
    a, b = unit_of(pairs[:, 0]), unit_of(pairs[:, 1])
    variant = np.einsum("ij,ij->i", a, b)
    random = np.einsum("ij,ij->i", a, b[_partners(len(pairs), seed)])
    return variant, random


def _gather(read: Rows, ids: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Reads the distinct ids once; returns unit rows by id."""
    distinct = np.unique(ids)
    unit = _unit(read(distinct))
    return lambda wanted: unit[np.searchsorted(distinct, wanted)]


def _shift_aucs(
    read: Rows, pairs: np.ndarray, shifts: list[int], rows: int, ctx: JobContext
) -> tuple[dict[int, float], int]:
    """The variant pairs' AUC with every id moved by each shift, and the rows read for it."""
    window = (pairs.reshape(-1, 1) + np.array(shifts)).ravel()
    window = np.unique(window[(window >= 0) & (window < rows)])
    unit_of = _gather(read, window)
    aucs: dict[int, float] = {}
    for shift in shifts:
        ctx.check()
        moved = pairs + shift
        ok = ((moved >= 0) & (moved < rows)).all(axis=1)
        if ok.sum() >= min(MIN_PAIRS // 2, len(pairs)):
            aucs[shift] = _auc(*_scores(unit_of, moved[ok], SEED))
    return aucs, len(window)


def _best_shift(
    read: Rows, pairs: np.ndarray, rows: int, ctx: JobContext
) -> tuple[int, float, int]:
    """The id shift in ±MAX_SHIFT whose rows make the variant pairs closest, its AUC, and the
    rows read. Every shift is screened with a few pairs; the likeliest ones are then scored
    with more (what the screen reads grows with the number of shifts)."""
    spread = pairs[np.random.default_rng(SEED).permutation(len(pairs))]
    shifts = [s for s in range(-MAX_SHIFT, MAX_SHIFT + 1) if s]
    screened, read_count = _shift_aucs(read, spread[:SCREEN_PAIRS], shifts, rows, ctx)
    likely = sorted(screened, key=lambda s: -screened[s])[:SHIFT_CANDIDATES]
    scored, more = _shift_aucs(read, spread[:SHIFT_PAIRS], likely, rows, ctx)
    best = max(scored, key=lambda s: scored[s], default=0)
    return best, scored.get(best, 0.0), read_count + more


def _untrained(read: Rows, ids: np.ndarray, words: np.ndarray):
    """(norm of never-used rows / norm of word rows, their mean cosine to their own mean)."""
    raw, norms = _norms(read(ids))
    word_norms = _norms(read(words))[1]
    ratio = float(np.median(norms) / np.median(word_norms)) if np.median(word_norms) > 0 else None
    unit = _unit(raw)
    mean = unit.mean(axis=0)
    size = np.linalg.norm(mean)
    cohesion = float((unit @ (mean / size)).mean()) if size > 0 else 0.0
    return ratio, cohesion


def _look_untrained(norm: float | None, cohesion: float | None) -> bool:
    """Never-used rows far shorter than word rows, or gathered around their mean."""
    return (norm is not None and norm < UNTRAINED_NORM) or (
        cohesion is not None and cohesion > UNTRAINED_COHESION
    )


def check_match(
    vocab: Vocabulary, rows: int, read: Rows, ctx: JobContext = NULL_CONTEXT
) -> Verdict:
    """The verdict for a vocabulary over a matrix of `rows` rows read through `read`."""
    pairs = variant_pairs(vocab)
    pairs = pairs[(pairs < rows).all(axis=1)]
    never = never_used_ids(vocab, rows)
    if len(never) > UNTRAINED_SAMPLE:
        pick = np.random.default_rng(SEED).choice(len(never), UNTRAINED_SAMPLE, replace=False)
        never = np.sort(never[pick])
    ctx.check()
    words = np.unique(pairs[:UNTRAINED_SAMPLE].ravel())
    norm, cohesion = (
        _untrained(read, never, words)
        if min(len(never), len(words)) >= 8
        else (
            None,
            None,
        )
    )
    found = Verdict(
        "unknown",
        None,
        f"cannot tell: only {len(pairs)} spelling-variant pairs in the vocabulary"
        + (
            "; its special and unused rows look untrained, as when the ids line up"
            if _look_untrained(norm, cohesion)
            else ""
        ),
        pairs=len(pairs),
        variant_cosine=None,
        random_cosine=None,
        auc=None,
        shifted_auc=None,
        untrained_rows=len(never),
        untrained_norm=norm,
        untrained_cohesion=cohesion,
        rows_read=len(never) + len(words),
    )
    if len(pairs) < MIN_PAIRS:
        return found
    distinct = np.unique(pairs)
    variant, random = _scores(_gather(read, distinct), pairs, SEED)
    auc = _auc(variant, random)
    said = f"variant pairs {variant.mean():.2f} vs random {random.mean():.2f}"
    found = replace(
        found,
        variant_cosine=float(variant.mean()),
        random_cosine=float(random.mean()),
        auc=auc,
        rows_read=found.rows_read + len(distinct),
    )
    if auc >= MATCH_AUC:
        return replace(found, verdict="matches", offset=0, sentence=f"matches ({said})")
    ctx.check()
    shift, shifted_auc, shift_rows = _best_shift(read, pairs, rows, ctx)
    found = replace(found, rows_read=found.rows_read + shift_rows)
    if shifted_auc >= MATCH_AUC:
        return replace(
            found,
            verdict="shifted",
            offset=shift,
            shifted_auc=shifted_auc,
            sentence=f"looks shifted by {shift:+d} id{'s' if abs(shift) > 1 else ''} ({said}; "
            f"at {shift:+d}: AUC {shifted_auc:.2f})",
        )
    return replace(
        found,
        verdict="mismatch",
        sentence=f"does not match ({said}, AUC {auc:.2f}; no shift within ±{MAX_SHIFT} ids helps)",
    )


class _Model(Protocol):  # the parts of an EmbeddingModel the check reads
    rows: int

    @property
    def tokenizer(self) -> object: ...

    def cold_rows(self, ids) -> np.ndarray: ...


def check_model(
    model: _Model, vocab: Vocabulary | None = None, ctx: JobContext = NULL_CONTEXT
) -> Verdict | None:
    """The verdict for a model's own tokenizer (or `vocab`); None without a tokenizer. Reads a
    few thousand rows (worker thread). match_cache.check_model keeps it in the user cache."""
    from explorer.core.model.decode import decode_rows

    if vocab is None:
        if model.tokenizer is None:
            return None
        vocab = Vocabulary.of(model.tokenizer)  # type: ignore[arg-type]
    return check_match(vocab, model.rows, lambda ids: decode_rows(model.cold_rows(ids)), ctx)
