"""Prefix search over token labels: '#id' goes through the one '#id' parser; built from short
sorted runs merged, the index orders the labels exactly as one sort would."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.tokenizer import vocab_index
from explorer.core.tokenizer.vocab_index import VocabIndex, search_key

LABELS = ["the", "cat", "cats", "Ġcat", "²", "#²", "dog"]


def test_hash_id_finds_the_row():
    index = VocabIndex(LABELS)
    assert [(m.id, m.label) for m in index.search("#2")] == [(2, "cats")]
    assert index.search("#7") == []  # beyond the vocabulary
    assert index.search("#" + "9" * 40) == []  # more digits than any id


def test_non_ascii_digits_are_text_not_ids():
    # '²'.isdigit() is True but int('²') fails: '#²' is token text, as in the query language
    assert [m.id for m in VocabIndex(LABELS).search("#²")] == [5]


def test_prefix_search_puts_exact_matches_first():
    assert [m.id for m in VocabIndex(LABELS).search("cat")][:1] == [1]


def _labels(n: int) -> list[str]:
    rng = np.random.default_rng(5)
    alphabet = list("abcAB␣▁Ġ#é猫 ")
    return ["".join(rng.choice(alphabet, size=int(rng.integers(1, 5)))) for _ in range(n)]


@pytest.mark.parametrize("run", [1, 3, 16, 4096])
def test_runs_merge_into_the_order_of_one_sort(monkeypatch, run):
    labels = _labels(700)  # many duplicate keys: ties go to the lower id
    monkeypatch.setattr(vocab_index, "RUN", run)
    index = VocabIndex(labels)
    order = sorted(range(len(labels)), key=lambda i: (search_key(labels[i]), i))
    assert index._ids == order
    assert index._keys == [search_key(labels[i]) for i in order]
    for query in ("a", "ab", "B", "猫", "é", "zz"):
        key = search_key(query)
        want = {i for i in range(len(labels)) if search_key(labels[i]).startswith(key)}
        assert len(want) <= vocab_index.SCAN_LIMIT
        assert {m.id for m in index.search(query, limit=1000)} == want
