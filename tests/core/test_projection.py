"""Projection core (no Qt): PCA preview, UMAP job, cancellation, tiny inputs, alignment, labels."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.errors import Cancelled, ExplorerError, TokenError
from explorer.core.map import figure, neighborhood, projection
from explorer.core.map.projection import ProjectionParams
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.jobs import Recorder

FAST = ProjectionParams(n_neighbors=5, n_epochs=20, seed=3)


def clusters(n_per: int = 20, dim: int = 32, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three well separated directions plus noise; returns vectors and their cluster labels."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((3, dim)) * 4
    labels = np.repeat(np.arange(3), n_per)
    x = centres[labels] + rng.standard_normal((3 * n_per, dim))
    return x.astype(np.float32), labels


def steps(x: np.ndarray, params: ProjectionParams) -> tuple[Recorder, np.ndarray]:
    ctx = Recorder()
    coords = projection.project(x, params, ctx)
    return ctx, coords


@pytest.fixture(scope="module")
def demo():
    model = open_model(demo_model_dir())
    yield model
    model.close()


def test_prepare_normalises_and_neutralises_bad_rows():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0], [np.inf, 0.0]], dtype=np.float32)
    p = projection.prepare(x)
    assert np.allclose(p[0], [0.6, 0.8])
    assert np.all(np.isfinite(p))
    assert np.all(p[1] == 0)
    assert np.allclose(p[2], [0.0, 1.0])


def test_pca_preview_separates_clusters_and_is_deterministic():
    x, labels = clusters()
    a = projection.pca_2d(projection.prepare(x), seed=1)
    b = projection.pca_2d(projection.prepare(x), seed=1)
    assert a.shape == (60, 2) and a.dtype == np.float32
    assert np.array_equal(a, b)
    means = np.array([a[labels == c].mean(axis=0) for c in range(3)])
    spread = max(np.linalg.norm(a[labels == c] - means[c], axis=1).mean() for c in range(3))
    gaps = [np.linalg.norm(means[i] - means[j]) for i in range(3) for j in range(i + 1, 3)]
    assert min(gaps) > 2 * spread


def test_pca_of_high_dimensional_rows_matches_exact_svd():
    rng = np.random.default_rng(5)
    # rank-5 structure with distinct scales plus noise, like real neighbourhoods
    latent = rng.standard_normal((200, 5)) * [9, 5, 3, 2, 1]
    raw = latent @ rng.standard_normal((5, 300)) + 0.3 * rng.standard_normal((200, 300))
    x = projection.prepare(raw.astype(np.float32))
    fast = projection.pca_2d(x)  # randomized SVD path
    centred = (x - x.mean(axis=0)).astype(np.float64)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    exact = centred @ vt[:2].T
    for k in range(2):  # same axes up to sign
        assert abs(abs(np.corrcoef(fast[:, k], exact[:, k])[0, 1]) - 1) < 1e-3


def test_knn_is_exact_and_lists_each_point_first():
    x = projection.prepare(clusters(15, 16, seed=2)[0])
    idx, dist = projection.knn_cosine(x, 6)
    sims = x.astype(np.float64) @ x.T.astype(np.float64)
    np.fill_diagonal(sims, np.inf)
    ref = np.argsort(-sims, axis=1, kind="stable")[:, :6]
    assert np.array_equal(idx[:, 0], np.arange(len(x)))
    assert np.array_equal(np.sort(idx[:, 1:], axis=1), np.sort(ref[:, 1:], axis=1))
    assert np.all(dist[:, 0] == 0) and np.all(np.diff(dist, axis=1) >= -1e-6)


def test_umap_job_reports_its_stages_and_is_deterministic():
    x, labels = clusters()
    seen, coords = steps(x, FAST)
    assert seen.texts[:2] == ["60 points × 32 dims", "PCA preview"]
    assert seen.texts[-1] == "UMAP layout" and any("UMAP epoch" in t for t in seen.texts)
    assert seen.fractions == sorted(seen.fractions) and 0 <= seen.fractions[0] < 1
    assert seen.fractions[-1] == 1.0 and seen.partials == []
    assert coords.shape == (60, 2) and np.isfinite(coords).all()
    _, again = steps(x, FAST)
    assert np.array_equal(coords, again)
    # the layout keeps the clusters apart: every point's nearest point is in its own cluster
    d = np.linalg.norm(coords[:, None] - coords[None], axis=2)
    np.fill_diagonal(d, np.inf)
    assert np.mean(labels[d.argmin(axis=1)] == labels) > 0.95


def test_cancel_between_stages_and_between_epochs():
    x, _ = clusters()
    between = Recorder(cancel_after=2)  # after the PCA preview
    with pytest.raises(Cancelled):
        projection.project(x, FAST, between)
    assert between.texts == ["60 points × 32 dims", "PCA preview"]

    epochs: list[float] = []

    class DuringEpochs(Recorder):
        def progress(self, fraction: float, text: str = "") -> None:
            if text.startswith("UMAP epoch"):
                epochs.append(fraction)
                self.cancel()  # cancel during the UMAP epochs

    with pytest.raises(Cancelled):
        projection.project(x, ProjectionParams(n_neighbors=5, n_epochs=200, seed=3), DuringEpochs())
    assert epochs and epochs[0] < 0.9

    # a cancelled layout leaves nothing locked: the next one, on another thread, completes
    import threading

    out: list = []
    worker = threading.Thread(target=lambda: out.append(steps(x, FAST)[1]))
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive() and out[0].shape == (60, 2)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7])
@pytest.mark.parametrize("method", ["umap", "pca"])
def test_tiny_inputs_do_not_crash(n, method):
    x = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
    _, coords = steps(x, ProjectionParams(method=method, n_epochs=5))
    assert coords.shape == (n, 2) and np.isfinite(coords).all()
    if n == 2:
        assert not np.allclose(coords[0], coords[1])


def test_duplicates_and_zero_rows_do_not_crash():
    x, _ = clusters(10, 8)
    dup = np.vstack([x[:1].repeat(12, axis=0), x, np.zeros((3, 8), np.float32), x[:5]])
    _, coords = steps(dup, FAST)
    assert coords.shape == (len(dup), 2) and np.isfinite(coords).all()
    same = np.ones((9, 4), np.float32)
    _, coords = steps(same, FAST)
    assert coords.shape == (9, 2) and np.isfinite(coords).all()


def test_params_are_validated():
    with pytest.raises(ExplorerError, match="method"):
        ProjectionParams(method="tsne")
    with pytest.raises(ExplorerError, match="n_neighbors"):
        ProjectionParams(n_neighbors=1)
    with pytest.raises(ExplorerError, match="min_dist"):
        ProjectionParams(min_dist=2.0)


def test_align_recovers_a_rotated_scaled_shifted_layout():
    rng = np.random.default_rng(0)
    old = rng.standard_normal((30, 2))
    theta = 1.1
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    reflect = np.array([[1.0, 0.0], [0.0, -1.0]])
    new = (old @ rot @ reflect) * 3.5 + [10.0, -4.0]
    old_ids = list(range(100, 130))
    # the new map has the old points in another order plus 5 new points
    order = rng.permutation(30)
    extra = rng.standard_normal((5, 2))
    new_all = np.vstack([new[order], extra])
    new_ids = [old_ids[i] for i in order] + [900, 901, 902, 903, 904]
    aligned = projection.align(new_all, new_ids, old, old_ids)
    assert np.allclose(aligned[:30], old[order], atol=1e-5)
    # fewer than 3 shared points: unchanged
    assert np.array_equal(
        projection.align(new_all, new_ids, old[:2], [old_ids[order[0]], 5]),
        new_all.astype(np.float32),
    )


def test_neighborhoods_on_the_demo_model(demo):
    cat = demo.tokenizer.find("cat")
    nb = neighborhood.around(demo, cat, 50)
    assert nb.ids[0] == cat and len(nb) == 50 and len(set(nb.ids.tolist())) == 50
    assert {"cats", "kitten", "dog"} <= set(nb.labels[:10])
    assert "banana" not in nb.labels
    assert nb.similarity[0] == pytest.approx(1.0, abs=1e-3)
    assert np.all(np.diff(nb.similarity[1:]) <= 1e-6)
    # exact against a brute-force float64 reference
    v = demo.vectors(np.arange(demo.rows)).astype(np.float64)
    sims = v @ v[cat] / (np.linalg.norm(v, axis=1) * np.linalg.norm(v[cat]))
    assert np.allclose(nb.similarity, sims[nb.ids], atol=1e-4)

    text = neighborhood.around_text(demo, "the cat sat", 40)
    assert set(text.query_ids) == {demo.tokenizer.find(w) for w in ("the", "cat", "sat")}
    assert set(text.query_ids) <= set(text.ids.tolist()) and len(text) == 40

    listed = neighborhood.from_list(demo, "cat, dog,#5, 100, cat")
    assert listed.ids.tolist() == [cat, demo.tokenizer.find("dog"), 5, 100]
    sample = neighborhood.sample(demo, 300, seed=1)
    assert len(set(sample.ids.tolist())) == 300
    assert np.array_equal(sample.ids, neighborhood.sample(demo, 300, seed=1).ids)


def test_neighborhood_bad_input(demo):
    with pytest.raises(TokenError):
        neighborhood.around(demo, demo.tokenizer.find("cat"), 0)
    with pytest.raises(TokenError):
        neighborhood.sample(demo, neighborhood.MAX_SAMPLE + 1)
    with pytest.raises(TokenError):
        neighborhood.from_list(demo, " , ,")
    with pytest.raises(TokenError):
        neighborhood.from_list(demo, "999999999")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.integers(0, 10_000))
def test_placed_labels_never_overlap_and_stay_inside(n, seed):
    rng = np.random.default_rng(seed)
    px, py = rng.uniform(0, 800, n), rng.uniform(0, 500, n)
    texts = ["".join(rng.choice(list("abcdefgh##"), rng.integers(1, 12))) for _ in range(n)]
    placed = figure.place_labels(
        px, py, texts, range(n), lambda s: 9.0 * len(s) + 6, 16.0, (0, 0, 800, 500), max_labels=120
    )
    boxes = np.array([(p.x, p.y, p.x + p.w, p.y + p.h) for p in placed]).reshape(-1, 4)
    assert len({p.index for p in placed}) == len(placed) <= 120
    assert np.all(boxes[:, 0] >= 0) and np.all(boxes[:, 2] <= 800)
    assert np.all(boxes[:, 1] >= 0) and np.all(boxes[:, 3] <= 500)
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            overlap = (
                boxes[a, 0] < boxes[b, 2]
                and boxes[b, 0] < boxes[a, 2]
                and boxes[a, 1] < boxes[b, 3]
                and boxes[b, 1] < boxes[a, 3]
            )
            assert not overlap
    if 150 < px[0] < 650 and 50 < py[0] < 450:  # the first in priority fits: it is placed
        assert placed[0].index == 0


def test_placement_in_steps_is_the_same_placement():
    rng = np.random.default_rng(3)
    px, py = rng.uniform(0, 800, 300), rng.uniform(0, 500, 300)
    texts = [f"w{i}" * int(rng.integers(1, 4)) for i in range(300)]
    args = (px, py, texts, range(300), lambda s: 9.0 * len(s) + 6, 16.0, (0, 0, 800, 500), 120)
    steps = figure.placing_labels(*args, tries_per_step=25)
    yields = 0
    while True:
        try:
            next(steps)
            yields += 1
        except StopIteration as done:
            in_steps = done.value
            break
    assert yields >= 4  # the tries went in steps of 25
    assert in_steps == figure.place_labels(*args) and len(in_steps) > 20


def test_svg_figure_and_coordinate_files():
    coords = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, -1.0]])
    labels = ["cat", "<dog & co>", "##s"]
    svg = figure.map_svg(
        coords,
        labels,
        title="Three",
        subtitle="sub",
        similarity=np.array([1, 0.5, 0.2]),
        highlight=[0],
        colour_label="cosine to cat",
    )
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "Three" in texts and "<dog & co>" in texts and "cat" in texts
    assert len(list(root.iter("{http://www.w3.org/2000/svg}circle"))) >= 3
    csv_text = figure.coordinates_csv([7, 8, 9], labels, coords)
    lines = csv_text.splitlines()
    assert lines[0] == "id,piece,x,y" and lines[2].startswith("8,<dog & co>,1,2")


def test_refinement_moves_misplaced_points_beside_their_neighbors():
    x, labels = clusters(20, 32, seed=4)
    xp = projection.prepare(x)
    good = projection.pca_2d(xp)
    bad = good.copy()
    rng = np.random.default_rng(0)
    swap = rng.choice(len(x), 12, replace=False)
    bad[swap] = good[np.roll(swap, 1)]  # 12 points dropped into the wrong places
    before = projection.trustworthiness(x, bad)
    fixed = projection.refine_neighbors(bad, xp)
    assert fixed.shape == bad.shape and fixed.dtype == np.float32 and np.isfinite(fixed).all()
    assert projection.trustworthiness(x, fixed) > before + 0.02
    assert np.array_equal(fixed, projection.refine_neighbors(bad, xp))
    # the misplaced points are back in their own cluster: their nearest map point shares it

    def own_cluster(coords: np.ndarray) -> float:
        d = np.linalg.norm(coords[swap][:, None] - coords[None], axis=2)
        d[np.arange(len(swap)), swap] = np.inf
        return float(np.mean(labels[d.argmin(axis=1)] == labels[swap]))

    assert own_cluster(fixed) > max(0.9, own_cluster(bad))
    # nothing to do for tiny inputs
    assert np.array_equal(projection.refine_neighbors(bad[:5], xp[:5]), bad[:5])


def test_demo_cat_map_is_trustworthy(demo):
    """Issue 5: the UMAP map of the 500 tokens around `cat` has trustworthiness ≥ 0.9 (cosine,
    10 neighbours, against the raw vectors)."""
    nb = neighborhood.around(demo, demo.tokenizer.find("cat"), 500)
    x = demo.vectors(nb.ids)
    coords = projection.project(x, ProjectionParams(seed=42))
    assert projection.trustworthiness(x, coords) >= 0.9


def test_plain_sample_leaves_out_special_and_unused_placeholder_tokens(demo):
    placeholder = [i for i in range(2000) if demo.label(i).startswith("[unused")]
    assert placeholder, "the demo (BERT) vocabulary has [unusedN] rows"
    n = 3000
    every = neighborhood.sample(demo, n, seed=2)
    plain = neighborhood.sample(demo, n, seed=2, plain=True)
    assert len(plain) == n and len(set(plain.ids.tolist())) == n
    special = demo.tokenizer.special_ids
    labels = [demo.label(int(i)) for i in plain.ids]
    assert not any(int(i) in special for i in plain.ids)
    assert not any(label.startswith("[unused") for label in labels)
    # the unfiltered draw of this size does pick some placeholders: the filter did something
    assert any(demo.label(int(i)).startswith("[unused") for i in every.ids)
    assert np.array_equal(plain.ids, neighborhood.sample(demo, n, seed=2, plain=True).ids)


def test_umap_needs_four_distinct_rows_else_pca():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((4, 6)).astype(np.float32)
    three = np.vstack([base[:3]] * 4)  # 12 rows, 3 different
    seen, coords = steps(three, FAST)
    assert "too few points for UMAP" in seen.texts[-1] and coords.shape == (12, 2)
    four = np.vstack([base] * 3)  # 12 rows, 4 different: UMAP runs
    seen, coords = steps(four, FAST)
    assert not any("too few" in t for t in seen.texts) and np.isfinite(coords).all()
    assert projection._has_distinct_rows(four, 4) and not projection._has_distinct_rows(three, 4)


def test_crowded_top_labels_move_out_as_callouts():
    """Points on top of each other: beside the point there is room for few labels; the first
    `callouts` of them go farther out instead, marked to get a line to their point."""
    px, py = np.full(6, 200.0), np.full(6, 150.0)
    texts = [f"neighbour{i}" for i in range(6)]
    args = (px, py, texts, range(6), lambda t: 8.0 * len(t), 16.0, (0, 0, 400, 300))
    plain = figure.place_labels(*args, offset=9.0)
    called = figure.place_labels(*args, offset=9.0, callouts=6)
    assert len(plain) < 6 and not any(p.leader for p in plain)
    assert sorted(p.index for p in called) == list(range(6))
    assert any(p.leader for p in called)


def test_the_figure_colours_similarities_by_rank():
    """Similarities bunched near 0.2 with one near neighbour at 0.8: a linear scale paints
    nearly every point the same dark colour; by rank they spread over the colour map."""
    import re

    rng = np.random.default_rng(1)
    n = 200
    sim = np.clip(rng.normal(0.2, 0.03, n), 0.05, 0.4)
    sim[1] = 0.8
    coords = rng.normal(size=(n, 2))
    out = figure.map_svg(coords, [f"w{i}" for i in range(n)], title="t", similarity=sim)
    fills = re.findall(r'<circle [^>]*fill="(#[0-9a-f]{6})"', out)
    assert len(fills) == n and len(set(fills)) > 50
    from explorer.core import svg

    dark = svg.colour(figure.viridis(np.array([0.0]))[0])
    assert sum(f == dark for f in fills) < n / 8
