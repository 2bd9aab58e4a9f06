"""The aligned pair of maps of two models: the shared tokens chosen, and B's layout aligned to
A's by orthogonal Procrustes, checked against numpy and scipy on real files."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes
from tokenizers import Tokenizer

from explorer.core.compare import maps as compare_maps
from explorer.core.compare import neighbors as compare
from explorer.core.errors import AnalysisError
from explorer.core.map import projection
from explorer.core.model.open import open_model
from tests.support.models import planted_model, write_model
from tests.support.tokenizers import make_bpe_tokenizer

PCA = projection.ProjectionParams(method="pca")


@pytest.fixture
def pair(tmp_path):
    folder, ea, _ = planted_model(tmp_path / "a", "F32")
    b_dir = tmp_path / "b"
    b_dir.mkdir()
    src = b_dir / "src.json"
    make_bpe_tokenizer(src, vocab_size=300)
    rows = Tokenizer.from_file(str(src)).get_vocab_size(with_added_tokens=True)
    eb = write_model(b_dir, rows=rows, dim=16, tokenizer=src, seed=5)
    a, b = open_model(folder), open_model(b_dir)
    return a, ea.astype(np.float64), b, eb.astype(np.float64), compare.align_vocabularies(a, b)


def _cosine(m: np.ndarray, q: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return m @ m[q] / (np.linalg.norm(m, axis=1) * np.linalg.norm(m[q]))


def test_shared_tokens_come_from_both_rankings(pair):
    a, ea, b, eb, align = pair
    t = a.tokenizer.find(" cat")
    ids, sim_a, sim_b = compare_maps.shared_around(a, b, t, 21, align)
    assert ids[0] == t and len(ids) == 21 and len(set(ids.tolist())) == 21
    assert (align.a_to_b[ids] >= 0).all()
    ca, cb = _cosine(ea, t), _cosine(eb, align.to_b(t))
    np.testing.assert_allclose(sim_a, ca[ids], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sim_b, cb[align.a_to_b[ids]], rtol=1e-5, atol=1e-6)
    shared = [
        i
        for i in np.flatnonzero(align.a_to_b >= 0)
        if i != t and np.isfinite(ca[i]) and np.isfinite(cb[align.a_to_b[i]])
    ]
    best_a = sorted(shared, key=lambda i: -ca[i])[:10]
    best_b = sorted(shared, key=lambda i: -cb[align.a_to_b[i]])[:10]
    assert set(best_a) | set(best_b) == set(ids[1:].tolist())  # 10 from each, no overlap left


def test_second_layout_is_the_procrustes_fit_onto_the_first(pair, monkeypatch):
    a, _, b, _, align = pair
    t = a.tokenizer.find(" cat")
    raw: list[np.ndarray] = []
    layout = compare_maps._layout
    monkeypatch.setattr(compare_maps, "_layout", lambda *args: raw.append(layout(*args)) or raw[-1])
    maps = compare_maps.aligned_maps(a, b, t, align, n=30, params=PCA)
    ra, rb = raw
    # scipy: the rotation R minimising |(B - mean) R - (A - mean)|, then the best uniform scale
    a0, b0 = ra - ra.mean(axis=0), rb - rb.mean(axis=0)
    rotation, s = orthogonal_procrustes(b0, a0)
    fitted = b0 @ rotation * (s / (b0**2).sum()) + ra.mean(axis=0)
    unaligned = compare_maps.disparity(rb, ra)
    assert 0 < maps.disparity < min(1.0, unaligned)
    assert maps.disparity == pytest.approx(((fitted - ra) ** 2).sum() / (a0**2).sum(), rel=1e-4)
    # both shown centred at unit RMS radius: A as laid out, B rotated onto it
    unit_a = a0 / np.sqrt((a0**2).sum(axis=1).mean())
    unit_b = b0 @ rotation / np.sqrt((b0**2).sum(axis=1).mean())
    np.testing.assert_allclose(maps.coords_a, unit_a, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(maps.coords_b, unit_b, rtol=1e-4, atol=1e-4)


def test_a_model_against_itself_gives_the_same_map(pair):
    a, *_ = pair
    align = compare.align_vocabularies(a, a)
    t = a.tokenizer.find(" cat")
    maps = compare_maps.aligned_maps(a, a, t, align, n=25, params=PCA)
    assert (maps.a_ids == maps.b_ids).all()
    np.testing.assert_allclose(maps.coords_b, maps.coords_a, atol=1e-4)
    assert maps.disparity == pytest.approx(0.0, abs=1e-6)


def test_a_token_missing_from_b_and_bad_sizes_are_refused(pair):
    a, _, b, _, align = pair
    missing = int(np.flatnonzero((align.a_to_b < 0) & a.used_rows)[0])
    with pytest.raises(AnalysisError, match="not in the second model"):
        compare_maps.shared_around(a, b, missing, 10, align)
    with pytest.raises(AnalysisError, match="between 2 and"):
        compare_maps.shared_around(a, b, a.tokenizer.find(" cat"), 1, align)
