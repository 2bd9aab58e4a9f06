"""SentencePiece merges found with array operations equal the plain dict loop's, order included."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.tokenizer import sp_merges


def plain(vocab: dict[str, int], scores) -> np.ndarray:
    """The reference: every split of every piece looked up in the dict, sorted by score, then
    by piece id and the halves' ids."""
    found = []
    for piece, i in vocab.items():
        for k in range(1, len(piece)):
            a, b = vocab.get(piece[:k]), vocab.get(piece[k:])
            if a is not None and b is not None:
                found.append((a, b, i))
    rank = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)
    found.sort(key=lambda m: (-rank[m[2]], m[2], m[0], m[1]))
    return np.array([(a, b) for a, b, _ in found], dtype=np.int64).reshape(-1, 2)


def random_vocab(seed: int, size: int) -> tuple[dict[str, int], np.ndarray]:
    rng = np.random.default_rng(seed)
    alphabet = list("ab▁cé漢😀\n ") + ["\ud800"]  # a lone surrogate, as a GGUF may hold
    pieces: dict[str, int] = {}
    ids = rng.permutation(size * 3)[:size]  # ids with gaps, in no order
    while len(pieces) < size:
        word = "".join(rng.choice(alphabet, rng.integers(1, 7)))
        pieces.setdefault(word, int(ids[len(pieces)]))
    scores = rng.standard_normal(size * 3)
    scores[rng.integers(0, size * 3, 20)] = np.nan
    scores[:50] = 1.0  # ties: the order falls back to ids
    return pieces, scores


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_the_dict_loop(seed):
    vocab, scores = random_vocab(seed, 3000)
    ids = np.fromiter(vocab.values(), np.int64)
    got = sp_merges.merge_ids(list(vocab), ids, scores)
    assert len(got) > 500
    assert np.array_equal(got, plain(vocab, scores))


def test_colliding_hashes_fall_back_to_the_dict_loop():
    """With base 1 a hash is the sum of code points: 'ab' and 'ba' collide, so the hashed search
    gives up and the plain loop answers."""
    vocab, scores = random_vocab(7, 500)
    ids = np.fromiter(vocab.values(), np.int64)
    assert sp_merges._splits(list(vocab), ids, 1) is None
    by_dict = sp_merges._splits_by_dict(list(vocab), ids)
    by_hash = sp_merges._splits(list(vocab), ids, sp_merges._BASE)
    assert by_hash is not None
    as_set = {tuple(x) for x in np.stack(by_dict, axis=1).tolist()}
    assert as_set == {tuple(x) for x in np.stack(by_hash, axis=1).tolist()}


def test_small_and_empty_vocabularies():
    assert sp_merges.merge_ids([], np.zeros(0, np.int64), []).shape == (0, 2)
    assert sp_merges.merge_ids(["a"], np.array([0]), [0.0]).shape == (0, 2)
    got = sp_merges.merge_ids(["a", "b", "ab"], np.array([0, 1, 2]), [0.0, 0.0, 1.0])
    assert got.tolist() == [[0, 1]]


def test_pair_strings_equal_taking_pieces_by_id():
    vocab, _ = random_vocab(3, 800)
    tokens = list(vocab) + ["x\0y"]  # a NUL inside a piece: taken one by one instead
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, len(tokens) - 1, (500, 2))
    want = [(tokens[a], tokens[b]) for a, b in pairs.tolist()]
    assert sp_merges.pair_strings(tokens[:-1], pairs) == want
    assert sp_merges.pair_strings(tokens, pairs) == want
    assert sp_merges.pair_strings(tokens, np.zeros((0, 2), np.int64)) == []
