"""Two models compared: byte alignment and exact neighbours against numpy on real files."""

from __future__ import annotations

import numpy as np
import pytest
from tokenizers import Tokenizer

from explorer.core.compare import neighbors as compare
from explorer.core.errors import AnalysisError
from explorer.core.model.open import open_model
from tests.support.models import planted_model, write_model
from tests.support.tokenizers import make_bpe_tokenizer, make_wordpiece_tokenizer


def _model_b(tmp_path, kind="bpe", vocab=300, dim=16):
    folder = tmp_path / f"b-{kind}"
    folder.mkdir()
    src = folder / "src.json"
    (make_bpe_tokenizer if kind == "bpe" else make_wordpiece_tokenizer)(src, vocab_size=vocab)
    rows = Tokenizer.from_file(str(src)).get_vocab_size(with_added_tokens=True)
    matrix = write_model(folder, rows=rows, dim=dim, tokenizer=src, seed=5)
    return open_model(folder), matrix


def _cos_top(m, q, k, hide=()):
    m = m.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = m @ m[q] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[q]))
    cos = np.where(np.isfinite(cos), cos, -np.inf)
    cos[q] = -np.inf
    cos[np.asarray(hide, dtype=np.int64)] = -np.inf  # rows the other model cannot align
    return np.lexsort((np.arange(len(cos)), -cos))[:k].tolist()


@pytest.fixture
def pair(tmp_path):
    folder, ea, _ = planted_model(tmp_path / "a", "F32")
    b, eb = _model_b(tmp_path)
    return open_model(folder), ea, b, eb


def test_alignment_pairs_equal_bytes(pair):
    a, _, b, _ = pair
    align = compare.align_vocabularies(a, b)
    b_bytes = {b.tokenizer.token_bytes(j): j for j in range(b.rows) if b.tokenizer.has_id(j)}
    expected = 0
    for i in range(a.rows):
        if not a.tokenizer.has_id(i):
            assert align.a_to_b[i] == -1
            continue
        j = b_bytes.get(a.tokenizer.token_bytes(i))
        assert align.to_b(i) == j
        expected += j is not None
    assert align.shared == expected and 0 < expected < a.tokenizer.vocab_size


def test_neighbors_overlap_and_jaccard_equal_numpy(pair):
    a, ea, b, eb = pair
    align = compare.align_vocabularies(a, b)
    t = a.tokenizer.find(" cat")
    result = compare.compare_neighbors(a, b, t, k=8, alignment=align)
    j = align.to_b(t)
    top_a = _cos_top(ea, t, 8, np.flatnonzero(align.a_to_b < 0))
    top_b = _cos_top(eb, j, 8, np.flatnonzero(align.b_to_a < 0))
    assert [r.id for r in result.a] == top_a and [r.id for r in result.b] == top_b
    mapped = {int(align.a_to_b[i]) for i in top_a if align.a_to_b[i] >= 0}
    both = len(mapped & set(top_b))
    d = result.as_dict()
    assert set(d) == {"a", "b", "overlap", "jaccard", "shared_vocab"}
    assert d["overlap"] == both and d["jaccard"] == pytest.approx(both / (16 - both))
    assert d["shared_vocab"] == align.shared
    assert sum(r["shared"] for r in d["b"]) == both
    same = compare.compare_neighbors(a, a, t, k=8)
    assert same.overlap == 8 and same.jaccard == 1.0


def test_wordpiece_self_alignment_is_complete_and_unmatched_tokens_are_refused(tmp_path):
    wp, _ = _model_b(tmp_path, "wordpiece")
    align = compare.align_vocabularies(wp, wp)
    assert align.shared == wp.tokenizer.vocab_size
    assert (align.a_to_b[align.a_to_b >= 0] == np.flatnonzero(align.a_to_b >= 0)).all()
    bpe, _ = _model_b(tmp_path, "bpe")
    unmatched = int(np.flatnonzero(compare.align_vocabularies(wp, bpe).a_to_b < 0)[0])
    with pytest.raises(AnalysisError, match="no token with the same bytes"):
        compare.compare_neighbors(wp, bpe, unmatched)


def test_overlap_distribution_agrees_with_single_comparisons(pair):
    a, _, b, _ = pair
    align = compare.align_vocabularies(a, b)
    dist = compare.overlap_distribution(a, b, sample=40, k=5, seed=1, alignment=align)
    assert 0 < len(dist.ids) <= 40
    for i, ov in list(zip(dist.ids.tolist(), dist.overlaps.tolist(), strict=True))[:6]:
        assert compare.compare_neighbors(a, b, i, k=5, alignment=align).overlap == ov
    d = dist.as_dict()
    assert sum(d["histogram"]["counts"]) == len(dist.ids)
    assert d["mean_overlap"] == pytest.approx(dist.overlaps.mean())


def test_rows_beyond_the_tokenizer_are_in_neither_list(tmp_path):
    """Rows no token of the other model can align with never count against the overlap."""
    src = tmp_path / "tok.json"
    make_bpe_tokenizer(src, vocab_size=300)
    vocab = Tokenizer.from_file(str(src)).get_vocab_size(with_added_tokens=True)
    rng = np.random.default_rng(3)
    base = rng.standard_normal((vocab, 16)).astype(np.float32)
    extra = 20
    padded = np.concatenate([base, np.zeros((extra, 16), np.float32)])
    tok_a = Tokenizer.from_file(str(src))
    t = tok_a.token_to_id("cat") or tok_a.encode("cat").ids[0]
    padded[vocab:] = base[t] + 0.01 * rng.standard_normal((extra, 16))  # nearest to t, unaligned
    write_model(tmp_path / "a", matrix=padded, tokenizer=src)
    write_model(tmp_path / "b", matrix=base, tokenizer=src)
    a, b = open_model(tmp_path / "a"), open_model(tmp_path / "b")
    assert a.unused_rows == extra
    result = compare.compare_neighbors(a, b, t, k=8)
    assert all(r.id < vocab for r in result.a)
    assert result.overlap == 8  # the same rows in both models: every neighbour shared
    assert [r.id for r in result.a] == _cos_top(base, t, 8)
    dist = compare.overlap_distribution(a, b, sample=20, k=5)
    assert (dist.overlaps == 5).all()
