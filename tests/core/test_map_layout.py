"""The map's computation (no Qt): choosing points, the PCA preview, alignment, clusters."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.context import NULL_CONTEXT, JobContext
from explorer.core.errors import Cancelled
from explorer.core.map import pipeline as map_layout
from explorer.core.map import projection
from explorer.core.map.pipeline import MapRequest, clusters_of
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.jobs import Recorder

PCA = projection.ProjectionParams(method="pca", seed=3)
FAST_UMAP = projection.ProjectionParams(n_neighbors=5, n_epochs=20, seed=3)


@pytest.fixture(scope="module")
def demo():
    model = open_model(demo_model_dir())
    yield model
    model.close()


def test_clusters_of_finds_separated_groups_and_names_them_by_their_central_token():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    which = np.repeat(np.arange(3), 30)
    coords = centres[which] + rng.standard_normal((90, 2))
    coords[0] = coords[1:30].mean(axis=0)  # exactly the mean of group 0: its central token
    labels = [f"t{i}" for i in range(90)]
    clusters, names = clusters_of(coords, labels, seed=0)
    assert len(names) == 3  # 90 points: 3 clusters (one per 25 points, at most 8)
    for g in range(3):  # every group is one cluster, and no cluster spans two groups
        assert len(set(clusters[which == g].tolist())) == 1
    assert len(set(clusters.tolist())) == 3
    assert any(name.startswith("t0, ") and name.endswith(" (30)") for name in names)


def test_cluster_names_are_the_tokens_nearest_the_embedding_centroid_and_readable():
    rng = np.random.default_rng(1)
    coords = np.repeat(np.array([[0.0, 0.0], [50.0, 0.0]]), 30, axis=0)
    coords += rng.standard_normal((60, 2))
    vectors = rng.standard_normal((60, 16)) * 0.1
    vectors[:30] += np.eye(16)[0]
    vectors[30:] += np.eye(16)[1]
    labels = [f"w{i}" for i in range(60)]
    vectors[5] = np.eye(16)[0]  # exactly the direction of group 0's centroid …
    vectors[7] = np.eye(16)[0] * 3  # … twice, but its label has no letter or digit
    labels[7] = "\u25af"
    unit = vectors[:30] / np.linalg.norm(vectors[:30], axis=1, keepdims=True)
    cos = unit @ unit.mean(axis=0)
    cos[[5, 7]] = -2
    second = f"w{int(np.argmax(cos))}"
    _, names = clusters_of(coords, labels, seed=0, vectors=vectors)
    assert f"w5, {second} (30)" in names and not any("\u25af" in n for n in names)


def test_clusters_of_a_small_map_is_one_cluster():
    clusters, names = clusters_of(np.zeros((10, 2)), ["a"] * 10, seed=0)
    assert clusters.tolist() == [0] * 10 and names == ("a",)


def test_pca_map_around_a_token_is_final_with_clusters(demo):
    cat = demo.tokenizer.find("cat")
    req = MapRequest("around", 120, PCA, query_ids=(cat,))
    ctx = Recorder()
    data = map_layout.choose_and_preview(demo, req, None, ctx)
    seen = list(zip(ctx.fractions, ctx.texts, strict=True))
    assert seen[0] == (0.02, "Choosing tokens")
    assert data.final and len(data.nb) == 120 and data.nb.ids[0] == cat
    assert data.coords.shape == (120, 2) and data.clusters is not None
    assert len(data.cluster_names) == 4  # 120 // 25
    expected = projection.pca_2d(projection.prepare(demo.vectors(data.nb.ids)), PCA.seed)
    np.testing.assert_allclose(data.coords, expected, rtol=1e-5, atol=1e-5)
    scan = [f for f, t in seen if t == "Scanning the vocabulary"]
    assert scan and all(0.02 <= f <= 0.52 for f in scan)  # the vocabulary scan reported
    assert map_layout.make_map(demo, req, None, ctx).final and ctx.partials == []  # no preview


def test_preview_is_aligned_to_the_previous_map(demo):
    dog = demo.tokenizer.find("dog")
    req = MapRequest("around", 60, FAST_UMAP, query_ids=(dog,))
    first = map_layout.choose_and_preview(demo, req, None)
    assert not first.final and first.clusters is None
    turned = first.coords @ np.array([[0.0, -1.0], [1.0, 0.0]]) * 3 + 5  # rotated, scaled, moved
    previous = (first.nb.ids, turned)
    again = map_layout.choose_and_preview(demo, req, previous)
    np.testing.assert_allclose(again.coords, turned, atol=1e-3 * np.abs(turned).max())


def test_umap_layout_replaces_the_preview_and_is_cancellable(demo):
    req = MapRequest("list", 0, FAST_UMAP, refs="cat, dog, kitten, banana, apple, car, bus, red")
    preview = map_layout.choose_and_preview(demo, req, None, NULL_CONTEXT)
    final = map_layout.layout(preview, FAST_UMAP)
    assert final.final and final.coords.shape == (8, 2)
    assert final.nb is preview.nb and final.clusters is not None
    cancelled = JobContext()
    cancelled.cancel()
    with pytest.raises(Cancelled):
        map_layout.layout(preview, FAST_UMAP, cancelled)


def test_one_job_hands_out_the_preview_then_returns_the_umap_map(demo):
    req = MapRequest("list", 0, FAST_UMAP, refs="cat, dog, kitten, banana, apple, car, bus, red")
    ctx = Recorder()
    final = map_layout.make_map(demo, req, None, ctx)
    (preview,) = ctx.partials
    assert not preview.final and final.final and final.nb is preview.nb
    expected = map_layout.layout(preview, FAST_UMAP)
    np.testing.assert_array_equal(final.coords, expected.coords)
