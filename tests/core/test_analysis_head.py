"""Input embedding vs output head, against numpy on real tied and untied model files."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.analysis import head
from explorer.core.errors import AnalysisError
from explorer.core.model.open import open_model
from tests.support.models import planted_model, write_model


def _cos_rows(a, b):
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.where(np.isfinite(c), c, np.nan)


def _top(key, k, exclude=None):
    key = np.where(np.isfinite(key), key, -np.inf)
    if exclude is not None:
        key[exclude] = -np.inf
    order = np.lexsort((np.arange(len(key)), -key))
    return order[:k].tolist()


@pytest.mark.parametrize("dtype", ["BF16", "F32"])
def test_untied_cosine_equals_numpy(tmp_path, dtype):
    folder, e, u = planted_model(tmp_path / "m", dtype, tied=False)
    model = open_model(folder)
    result = head.head_cosine(model, cache_dir=tmp_path / "c")
    ref = _cos_rows(e.astype(np.float64), u.astype(np.float64))
    np.testing.assert_allclose(result.cosine, ref, rtol=1e-12, equal_nan=True)
    d = result.as_dict()
    assert d["tied"] is False
    assert d["cosine"]["median"] == pytest.approx(np.nanmedian(ref))
    assert d["cosine"]["min"] == pytest.approx(np.nanmin(ref))
    counts, _ = np.histogram(ref[np.isfinite(ref)], bins=50)
    assert d["cosine"]["histogram"]["counts"] == counts.tolist()
    assert [r["id"] for r in d["extremes"] if r["end"] == "lowest"] == _top(-ref, 10)
    assert [r["id"] for r in d["extremes"] if r["end"] == "highest"] == _top(ref, 10)
    assert head.head_cosine(model, cache_dir=tmp_path / "c").cached


def test_untied_token_view_equals_numpy(tmp_path):
    folder, e, u = planted_model(tmp_path / "m", "F32", tied=False)
    model = open_model(folder)
    e64, u64 = e.astype(np.float64), u.astype(np.float64)
    t = model.tokenizer.find(" cat")
    view = head.token_view(model, t, k=7)
    in_cos = _cos_rows(e64, np.broadcast_to(e64[t], e64.shape))
    out_cos = _cos_rows(u64, np.broadcast_to(u64[t], u64.shape))
    assert [r.id for r in view.neighbors_input] == _top(in_cos, 7, exclude=t)
    assert [r.id for r in view.neighbors_output] == _top(out_cos, 7, exclude=t)
    logits = u64 @ e64[t]
    assert [r.id for r in view.direct_path] == _top(logits, 7)
    np.testing.assert_allclose([r.score for r in view.direct_path], np.sort(logits)[::-1][:7])
    ids_in = {r.id for r in view.neighbors_input}
    assert view.overlap == len(ids_in & {r.id for r in view.neighbors_output})
    assert view.token.score == pytest.approx(_cos_rows(e64[t : t + 1], u64[t : t + 1])[0])


def test_tied_head_says_so_and_uses_e_for_the_direct_path(tmp_path):
    folder, e, _ = planted_model(tmp_path / "m", "BF16", tied=True)
    model = open_model(folder)
    d = head.head_cosine(model).as_dict()
    assert d == {
        "tied": True,
        "shown_as_tied": True,
        "head": model.head.words,
        "cosine": None,
        "extremes": [],
    }
    t = model.tokenizer.find(" cat")
    view = head.token_view(model, t, k=5)
    e64 = e.astype(np.float64)
    assert [r.id for r in view.direct_path] == _top(e64 @ e64[t], 5)
    assert view.neighbors_output == view.neighbors_input and view.overlap == 5


def test_untied_config_without_a_head_is_a_clear_error(tmp_path):
    write_model(tmp_path / "m", rows=32, dim=8, config={"tie_word_embeddings": False})
    model = open_model(tmp_path / "m")
    with pytest.raises(AnalysisError, match="no head tensor"):
        head.head_cosine(model)
