"""The public Python API (`import explorer`) on the demo model and small real model files."""

from __future__ import annotations

import io

import numpy as np
import pytest

import explorer
from explorer.api.progress import TextBar
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.models import planted_model, write_model


@pytest.fixture(scope="module")
def demo():
    with explorer.open(demo_model_dir()) as m:
        yield m


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_open_describes_the_model(demo):
    core = open_model(demo_model_dir())
    assert demo.shape == (core.rows, core.dim) == (30522, 384)
    assert demo.dtype == core.dtype
    assert demo.tensor == "embeddings.word_embeddings.weight"
    assert demo.tied is None and "encoder" in demo.tied_evidence
    assert demo.tokenizer_source is not None and demo.tokenizer_source.endswith("tokenizer.json")
    assert demo.info()["rows"] == 30522
    assert "30,522" in demo._repr_html_() and "encoder" in demo._repr_html_()


def test_rows_decode_exactly_like_the_core(tmp_path):
    stored = write_model(tmp_path / "m", rows=50, dim=6, dtype="F32")
    with explorer.open(tmp_path / "m", tokenizer=False) as m:
        np.testing.assert_array_equal(m.E[7], stored[7])
        np.testing.assert_array_equal(m.E[-1], stored[-1])
        np.testing.assert_array_equal(m.E[[3, 1, 3]], stored[[3, 1, 3]])
        np.testing.assert_array_equal(m.E[10:20], stored[10:20])
        np.testing.assert_array_equal(m.E[::7], stored[::7])
        np.testing.assert_array_equal(m.E[[1, 2], :3], stored[[1, 2], :3])
        np.testing.assert_array_equal(m.E[5, 2], stored[5, 2])
        mask = np.zeros(50, dtype=bool)
        mask[[4, 9]] = True
        np.testing.assert_array_equal(m.E[mask], stored[mask])
        np.testing.assert_array_equal(np.asarray(m.E), stored)
        assert m.E.shape == (50, 6) and len(m.E) == 50 and m.E[3:3].shape == (0, 6)
        assert m.row(7).dtype == np.float32 and m.row("#7").tolist() == stored[7].tolist()
        with pytest.raises(explorer.ExplorerError, match="out of range"):
            m.E[50]


def test_bf16_rows_are_exact(demo):
    core = open_model(demo_model_dir())
    bits = np.asarray(core.matrix[[3710, 0]]).view(np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(demo.E[[3710, 0]], bits.view(np.float32))


def test_tokenize_gives_ids_pieces_bytes_and_offsets(demo):
    tokens = demo.tokenize("The cats sat")
    assert [t.piece for t in tokens] == ["the", "cats", "sat"]
    assert [(t.start, t.end) for t in tokens] == [(0, 3), (4, 8), (9, 12)]
    assert tokens.ids.tolist() == [demo.token_id(p) for p in ("the", "cats", "sat")]
    assert tokens[1].bytes == b"cats"
    frame = tokens.to_pandas()
    assert frame["piece"].tolist() == ["the", "cats", "sat"]
    assert "<td" in tokens._repr_html_()


def test_readable_pieces_in_html(tmp_path):
    write_model(tmp_path / "m", rows=500, dim=8, tokenizer="bpe")
    with explorer.open(tmp_path / "m") as m:
        tokens = m.tokenize("the cat\n")
        assert any(t.piece.startswith("Ġ") for t in tokens)
        page = tokens._repr_html_()
        assert "␣" in page and "Ġ" not in page and "↵" in page


def test_neighbors_of_cat(demo):
    nb = demo.neighbors("cat", k=10)
    assert {"cats", "kitten", "dog"} <= set(nb.texts)
    assert demo.token_id("banana") not in nb.ids
    assert demo.token_id("cat") not in nb.ids  # the query is left out
    assert np.all(np.diff(nb.scores) <= 0)
    rows = list(nb)
    assert rows[0].rank == 1 and rows[0].id == nb.ids[0] and rows[0].score == nb.scores[0]
    assert nb[0].piece == nb.pieces[0] == "cats"
    same = demo.neighbors(demo.token_id("cat"))
    by_vector = demo.neighbors(demo.row("cat"))  # a vector query keeps cat itself
    assert same.ids.tolist() == nb.ids.tolist()
    assert by_vector.ids[0] == demo.token_id("cat")
    assert by_vector.ids[1:].tolist() == nb.ids[:9].tolist()
    frame = nb.to_pandas()
    assert frame.columns.tolist() == ["rank", "id", "piece", "text", "score"]
    assert "kitten" in nb._repr_html_() and "kitten" in repr(nb)


def test_neighbors_scores_match_numpy(demo):
    ids = np.arange(0, 30522)
    e = demo.E[ids].astype(np.float64)
    q = e[demo.token_id("cat")]
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = e @ q / (np.linalg.norm(e, axis=1) * np.linalg.norm(q))
    nb = demo.neighbors("cat", k=5, exact=True)
    np.testing.assert_allclose(nb.scores, cos[nb.ids], rtol=1e-6)
    dot = demo.neighbors("cat", k=3, metric="dot")
    np.testing.assert_allclose(dot.scores, (e @ q)[dot.ids], rtol=1e-6)


def test_queries_of_every_kind(demo):
    king = demo.neighbors("king - man + woman", k=5)
    assert "queen" in king.texts
    phrase = demo.neighbors("ice cream", k=5)
    assert phrase.query.startswith("ice cream")
    mean = demo.neighbors([demo.token_id("ice"), demo.token_id("cream")], k=5)
    assert mean.ids.tolist() == phrase.ids.tolist()
    many = demo.neighbors_many(["cat", "dog"], k=4)
    one_by_one = [demo.neighbors(q, k=4).ids.tolist() for q in ("cat", "dog")]
    assert [n.ids.tolist() for n in many] == one_by_one
    with pytest.raises(TypeError, match="a query is"):
        demo.neighbors(np.zeros((2, 2)))
    with pytest.raises(explorer.ExplorerError):
        demo.neighbors("cat", metric="manhattan")


def test_progress_callable_bar_and_cancel(demo):
    seen: list[float] = []
    demo.stats(progress=lambda fraction, text: seen.append(fraction), cache=False)
    assert seen and seen[-1] == pytest.approx(1.0)
    out = io.StringIO()
    bar = TextBar("scan", out)
    for f in (0.0, 0.5, 0.5, 1.0):
        bar.update(f, "rows")
    bar.close()
    assert out.getvalue().count("\r") == 3 and "100 %" in out.getvalue()
    ctx = explorer.JobContext()
    ctx.cancel()
    with pytest.raises(explorer.Cancelled):
        demo.stats(progress=ctx, cache=False)
    with pytest.raises(TypeError, match="progress must be"):
        demo.neighbors("cat", progress="yes")  # type: ignore[arg-type]


def test_progress_true_draws_a_bar(demo, capsys):
    demo.map(around="cat", n=30, method="pca", progress=True)
    assert "map" in capsys.readouterr().err


def test_map_of_a_neighbourhood(demo):
    m = demo.map(around="cat", n=40, method="pca")
    assert m.ids[0] == demo.token_id("cat") and len(m) == 40 and m.xy.shape == (40, 2)
    assert np.isfinite(m.xy).all() and m.method == "pca"
    listed = demo.map(["cat", "dog", "#2000", 3000], method="pca")
    assert listed.ids.tolist() == [demo.token_id("cat"), demo.token_id("dog"), 2000, 3000]
    sample = demo.map(sample=30, method="pca", seed=1)
    assert len(sample) == 30 and sample.to_pandas().shape == (30, 4)
    assert "kitten" in m._repr_svg_()
    assert demo.map(sample=5001, method="pca")._repr_svg_() is None  # too many points inline
    with pytest.raises(explorer.ExplorerError, match="one of"):
        demo.map(around="cat", sample=3)


def test_stats_match_numpy(tmp_path):
    folder, e, _ = planted_model(tmp_path / "m", "F32")
    with explorer.open(folder) as m:
        s = m.stats()
        np.testing.assert_allclose(s.norms, np.linalg.norm(e.astype(np.float64), axis=1), rtol=1e-9)
        np.testing.assert_allclose(s.dim_std, e.astype(np.float64).std(axis=0), rtol=1e-6)
        assert s.to_pandas().shape == (e.shape[0], 3) and "rows" in repr(s)


@pytest.mark.parametrize("tied", [True, False])
def test_head_tied_and_untied(tmp_path, tied):
    folder, e, u = planted_model(tmp_path / "m", "F32", tied=tied)
    with explorer.open(folder) as m:
        h = m.head(token=5, k=4)
        assert h.tied is tied and m.tied is tied
        assert h.direct_path is not None and len(h.direct_path) == 4
        if tied:
            assert h.cosine is None and h.lowest is None
            logits = e.astype(np.float64) @ e[5].astype(np.float64)
        else:
            assert u is not None and h.cosine is not None and h.lowest is not None
            logits = u.astype(np.float64) @ e[5].astype(np.float64)
        assert h.direct_path.ids.tolist() == np.argsort(-logits, kind="stable")[:4].tolist()
        assert h.to_pandas().shape[0] == 4


def test_compare_two_models(tmp_path):
    folder_a, _, _ = planted_model(tmp_path / "a", "F32", seed=3)
    folder_b, _, _ = planted_model(tmp_path / "b", "BF16", seed=3)
    with explorer.open(folder_a) as a, explorer.open(folder_b) as b:
        c = a.compare(b, token=7, k=5)
        assert c.a_id == 7 and c.b_id == 7 and len(c.a) == 5
        assert c.overlap >= 4 and c.to_pandas().shape == (5, 5) and "overlap" in repr(c)


def test_bad_path_is_one_clear_error(tmp_path):
    with pytest.raises(explorer.ExplorerError, match="no such file"):
        explorer.open(tmp_path / "missing")


def test_quantised_search_equals_the_core_on_the_file(tmp_path):
    """A Q8_0 GGUF is searched on a copy decoded once; the answers are the file's own."""
    from explorer.core.search.neighbors import NeighborSearcher, query_for_ids
    from tests.support.models import random_matrix, stored, write_gguf

    raw = stored(random_matrix(300, 64, seed=2), "Q8_0")
    path = write_gguf(tmp_path / "m.gguf", {"token_embd.weight": (raw, "Q8_0")})
    core = open_model(path)
    with explorer.open(path) as m:
        assert m.dtype == "Q8_0" and m.searcher().model.matrix.dtype == np.float32
        for token_id in (0, 17, 299):
            ours = m.neighbors(token_id, k=8, metric="cosine")
            theirs = NeighborSearcher(core).search(query_for_ids(core, [token_id]), k=8)
            assert ours.ids.tolist() == theirs.ids.tolist()
            np.testing.assert_array_equal(ours.scores, theirs.scores)
        l2 = m.neighbors(5, k=4, metric="l2")
        ref = np.linalg.norm(m.E[:] - m.E[5], axis=1)
        ref[5] = np.inf
        assert l2.ids.tolist() == np.argsort(ref, kind="stable")[:4].tolist()


def test_equal_scores_come_in_id_order(tmp_path):
    """Identical rows tie exactly: they are listed by id, for one query as in a batch."""
    matrix = np.random.default_rng(4).standard_normal((3000, 16)).astype(np.float32)
    twins = np.random.default_rng(5).choice(np.arange(1, 3000), size=40, replace=False)
    matrix[twins] = matrix[0] * 1.5  # same direction: cosine 1 with row 0 and each other
    write_model(tmp_path / "m", matrix=matrix)
    with explorer.open(tmp_path / "m", tokenizer=False) as m:
        one = m.neighbors(0, k=30)
        assert one.ids.tolist() == sorted(twins.tolist())[:30]
        many = m.neighbors_many([0, 1, 2], k=30)
        assert many[0].ids.tolist() == one.ids.tolist()


def test_tokenizer_given_or_skipped(tmp_path):
    from tests.support.tokenizers import make_bpe_tokenizer

    write_model(tmp_path / "m", rows=500, dim=8)  # no tokenizer beside the weights
    make_bpe_tokenizer(tmp_path / "elsewhere.json")
    with explorer.open(tmp_path / "m") as bare:
        assert bare.tokenizer_source is None and bare.label(3) == "#3"
        with pytest.raises(explorer.ExplorerError, match="no tokenizer"):
            bare.tokenize("the cat")
    with explorer.open(tmp_path / "m", tokenizer=tmp_path / "elsewhere.json") as m:
        assert m.tokenizer_source is not None and m.tokenize("the cat").ids.size >= 2
        assert m.label(m.token_id("the")) == "the"
