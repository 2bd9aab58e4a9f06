"""Prefix search over token labels: '#id' goes through the one '#id' parser."""

from __future__ import annotations

from explorer.core.vocab_index import VocabIndex

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
