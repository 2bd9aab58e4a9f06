"""The random twin: same shape and per-dimension scale, seeded, lazily generated, never whole."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.core.learning import contrast
from explorer.core.learning.twin import RandomTwin
from explorer.core.model.open import open_model
from explorer.core.resources import demo_model_dir
from tests.support.models import write_model


@pytest.fixture()
def scaled_model(tmp_path):
    """5,000 rows whose columns have very different means and scales."""
    rng = np.random.default_rng(7)
    mean = np.linspace(-2, 3, 12)
    std = np.geomspace(0.01, 4, 12)
    matrix = (rng.standard_normal((5000, 12)) * std + mean).astype(np.float32)
    write_model(tmp_path / "m", matrix=matrix, config={"vocab_size": 5000})
    return open_model(tmp_path / "m"), mean, std


def test_same_shape_and_per_dimension_scale(scaled_model):
    model, mean, std = scaled_model
    twin = RandomTwin.of(model, seed=1)
    assert (twin.rows, twin.dim) == (model.rows, model.dim)
    rows = twin.decode_block(0, twin.rows)
    assert rows.shape == (5000, 12) and rows.dtype == np.float32
    real = model.decode_block(0, model.rows)
    # within a few standard errors of the real matrix's own statistics
    assert (np.abs(rows.mean(axis=0) - real.mean(axis=0)) < 0.1 * std + 1e-3).all()
    np.testing.assert_allclose(rows.std(axis=0), real.std(axis=0), rtol=0.1)
    # and the values look normal: about 68 % within one standard deviation
    inside = np.abs(rows - rows.mean(axis=0)) < rows.std(axis=0)
    assert 0.66 < inside.mean() < 0.70


def test_deterministic_per_seed(scaled_model):
    model, _, _ = scaled_model
    a = RandomTwin.of(model, seed=3).vectors([0, 17, 4999])
    b = RandomTwin.of(model, seed=3).vectors([0, 17, 4999])
    c = RandomTwin.of(model, seed=4).vectors([0, 17, 4999])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert not np.allclose(a[0], a[1])  # rows differ from each other


def test_block_equals_rows_asked_one_by_one(scaled_model):
    model, _, _ = scaled_model
    twin = RandomTwin.of(model, seed=5)
    block = twin.decode_block(1234, 1300)
    one_by_one = np.stack([twin.vector(i) for i in range(1234, 1300)])
    np.testing.assert_array_equal(block, one_by_one)
    np.testing.assert_array_equal(twin.vectors([1299, 1234]), block[[-1, 0]])
    assert twin.decode_block(4990, 6000).shape == (10, 12)  # clipped like the model's
    with pytest.raises(ExplorerError, match="out of range"):
        twin.vectors([5000])


def test_no_whole_matrix_allocation(tmp_path):
    rows, dim = 400_000, 64  # 102 MB as float32
    write_model(tmp_path / "big", rows=rows, dim=dim, config={"vocab_size": rows})
    model = open_model(tmp_path / "big")
    tracemalloc.start()
    try:
        twin = RandomTwin.of(model, seed=0)
        total = np.zeros(dim)
        for start in range(0, rows, 8192):  # a statistic streamed over the whole twin
            total += twin.decode_block(start, start + 8192).sum(axis=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.isfinite(total).all()
    assert peak < 0.2 * rows * dim * 4, f"peak {peak / 1e6:.1f} MB"


def test_contrast_on_the_demo_model():
    model = open_model(demo_model_dir())
    twin = RandomTwin.of(model, seed=0)
    groups = contrast.reference_groups(model.tokenizer)
    assert len(groups) >= 4
    real_overlap = contrast.group_overlap(model, groups)
    twin_overlap = contrast.group_overlap(twin, groups)
    assert real_overlap > 0.3 and twin_overlap < 0.05
    real_spread, twin_spread = contrast.cosine_spread(model), contrast.cosine_spread(twin)
    assert real_spread.std > 1.5 * twin_spread.std
    assert twin_spread.counts.sum() == 20_000
    ids = np.random.default_rng(0).choice(model.rows, 400, replace=False)
    assert contrast.map_trustworthiness(model, ids) > contrast.map_trustworthiness(twin, ids)
    cat = model.tokenizer.find("cat")
    real_nb = {model.label(int(i)) for i in contrast.top_neighbors(model, [cat], 10)[0]}
    assert {"cats", "kitten"} <= real_nb
