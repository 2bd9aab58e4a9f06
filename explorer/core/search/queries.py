"""Query vectors for neighbour search: token ids, phrases, vector expressions, raw vectors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.errors import TokenError
from explorer.core.limits import check_text, parse_hash_id
from explorer.core.model.embedding import EmbeddingModel


@dataclass(frozen=True)
class Query:
    vector: np.ndarray  # float32 [dim]
    exclude: frozenset[int]  # the query's own token ids (left out unless include_query)
    description: str
    hidden: frozenset[int] = frozenset()  # always left out (special tokens, for expressions)
    hint: str | None = None  # a better way to ask, for the user

    def left_out(self, include_query: bool) -> frozenset[int]:
        return self.hidden if include_query else self.exclude | self.hidden


def _mean_rows(model: EmbeddingModel, ids: Sequence[int]) -> np.ndarray:
    """The mean of the rows of `ids`, each row read once however often its id repeats (a 40k-
    token phrase of the 4096-wide model made 1.3 GB of float64 rows, one per token)."""
    distinct, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
    vecs = model.vectors(distinct).astype(np.float64)
    return (counts.astype(np.float64) @ vecs / counts.sum()).astype(np.float32)


def query_for_ids(
    model: EmbeddingModel, ids: Sequence[int], hidden: frozenset[int] = frozenset()
) -> Query:
    """The mean of the given rows (`hidden`: rows never to answer with)."""
    ids = [model.check_id(int(i)) for i in ids]
    if not ids:
        raise TokenError("no token ids given")
    desc = model.label(ids[0]) if len(set(ids)) == 1 else f"mean of {len(ids)} tokens"
    return Query(_mean_rows(model, ids), frozenset(ids), desc, hidden)


def _need_tokenizer(model: EmbeddingModel, what: str):
    if model.tokenizer is None:
        raise TokenError(
            f"cannot look up {what!r}: this model has no tokenizer.json; use ids (#123)"
        )
    return model.tokenizer


def _phrase_ids(model: EmbeddingModel, text: str) -> list[int]:
    tok = _need_tokenizer(model, text)
    if not text.strip():
        raise TokenError("the text is empty")
    tokens = tok.encode(text)
    if not tokens:
        raise TokenError(f"{text!r} encodes to no tokens")
    unknown = [t for t in tokens if t.id in tok.special_ids and t.piece not in text]
    if unknown:  # e.g. BERT's [UNK]: the text is not in the vocabulary
        raise TokenError(f"{text!r} is not in the vocabulary (it encodes to {unknown[0].piece})")
    ids = [t.id for t in tokens]
    return [model.check_id(i) for i in ids]


def query_for_text(model: EmbeddingModel, text: str) -> Query:
    """The mean of the rows of the phrase's tokens."""
    ids = _phrase_ids(model, text)
    desc = text if len(ids) == 1 else f"{text} (mean of {len(ids)} tokens)"
    return Query(_mean_rows(model, ids), frozenset(ids), desc)


_TERM = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([^+\-"']+))\s*""")


def _split_expression(expr: str) -> list[tuple[int, str]]:
    """'king - man + woman' → [(+1, 'king'), (-1, 'man'), (+1, 'woman')].

    A term is a token text, '#id', or a quoted string (quote terms that contain + or -).
    """
    check_text(expr, "the expression")
    terms: list[tuple[int, str]] = []
    pos, sign, signed = 0, 1, False
    expect_term = True
    text = expr.strip()
    if not text:
        raise TokenError("the expression is empty")
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch in "+-":
            if expect_term and (terms or signed):
                raise TokenError(
                    f"expression {expr!r}: two operators in a row at position {pos + 1}"
                )
            sign, signed, expect_term = (1 if ch == "+" else -1), True, True
            pos += 1
            continue
        if not expect_term:
            raise TokenError(f"expression {expr!r}: missing + or - before position {pos + 1}")
        if ch in "\"'" and text.find(ch, pos + 1) < 0:
            raise TokenError(f"expression {expr!r}: unclosed quote at position {pos + 1}")
        m = _TERM.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any remaining text
            raise TokenError(f"expression {expr!r}: cannot read position {pos + 1}")
        term = next(g for g in m.groups() if g is not None)
        term = term if m.group(3) is None else term.strip()
        if not term:
            raise TokenError(f"expression {expr!r}: empty term at position {pos + 1}")
        terms.append((sign, term))
        pos, sign, signed, expect_term = m.end(), 1, False, False
    if expect_term:
        raise TokenError(f"expression {expr!r}: ends with an operator")
    return terms


def _term_ids(model: EmbeddingModel, term: str) -> list[int]:
    if (token_id := parse_hash_id(term)) is not None:
        return [model.check_id(token_id)]
    tok = _need_tokenizer(model, term)
    try:
        found = tok.find(term)
    except TokenError:
        return _phrase_ids(model, term)  # several tokens: their mean
    return [model.check_id(found)]


def _with_space_mark(term: str) -> str:
    """A term as a title shows it: leading spaces as ␣ (' king' is the token ␣king)."""
    bare = term.lstrip(" ")
    return "␣" * (len(term) - len(bare)) + bare


def _spaced_twin(model: EmbeddingModel, term: str, ids: list[int]) -> bool:
    """True if `term` (a bare word) reads differently with a space before it, as a word inside
    a sentence does in byte-level BPE and SentencePiece vocabularies ('king' vs '␣king')."""
    if parse_hash_id(term) is not None or term.startswith(" ") or model.tokenizer is None:
        return False
    try:
        twin = model.tokenizer.find(" " + term)
    except TokenError:
        return False
    return [twin] != ids


def query_for_expression(model: EmbeddingModel, expr: str) -> Query:
    """A vector expression such as 'king - man + woman' ('#id' terms; multi-token term = mean).

    Special tokens are left out of its neighbours (they are no answer to an analogy), and bare
    words that have a ␣-prefixed twin in this vocabulary give a hint to use it."""
    total = np.zeros(model.dim, dtype=np.float64)
    exclude: set[int] = set()
    shown, suggested, twins = [], [], 0
    for sign, term in _split_expression(expr):
        ids = _term_ids(model, term)
        total += sign * _mean_rows(model, ids).astype(np.float64)
        exclude.update(ids)
        op = "- " if sign < 0 else "+ "
        shown.append(op + _with_space_mark(term))
        twin = _spaced_twin(model, term, ids)
        twins += twin
        suggested.append(op + (f"' {term}'" if twin else term))
    desc = " ".join(shown)
    desc = desc[2:] if desc.startswith("+ ") else desc
    hint = None
    if twins:
        better = " ".join(suggested)
        better = better[2:] if better.startswith("+ ") else better
        hint = f"words inside a sentence start with ␣ here; try {better}"
    special = getattr(model.tokenizer, "special_ids", None) or ()
    return Query(
        total.astype(np.float32), frozenset(exclude), desc, frozenset(special) - exclude, hint
    )


def query_for_vector(vector, description: str = "vector") -> Query:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    return Query(v, frozenset(), description)
