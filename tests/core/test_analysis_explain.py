"""onehot(t) · E computed in blocks equals the lookup E[t]; the equality is counted, not assumed."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.analysis import blocks, explain
from explorer.core.model.formats.safetensors import SafetensorsFile
from explorer.core.model.open import open_model
from tests.support.models import planted_model


@pytest.mark.parametrize(("dtype", "tied"), [("BF16", True), ("F32", False), ("F64", True)])
def test_product_equals_lookup_and_numpy(tmp_path, dtype, tied, monkeypatch):
    monkeypatch.setattr(blocks, "DECODED_BLOCK_BYTES", 64 * 48 * 8)  # many small blocks
    folder, e, _ = planted_model(tmp_path / "m", dtype, tied)
    model = open_model(folder)
    sizes: list[int] = []
    decode = model.decode_block
    model.decode_block = lambda a, b: sizes.append(b - a) or decode(a, b)  # type: ignore[method-assign]
    t = model.tokenizer.find(" cat")
    result = explain.explain(model, t)
    assert len(sizes) > 3 and max(sizes) < model.rows and sum(sizes) == model.rows
    dense = np.zeros(len(e), dtype=e.astype(np.float32).dtype if dtype != "F64" else np.float64)
    dense[t] = 1
    reference = dense @ e.astype(dense.dtype)
    assert result.identical == int(np.count_nonzero(reference == e[t].astype(dense.dtype)))
    assert result.identical == model.dim
    assert result.statement == f"identical: {model.dim} of {model.dim} values"
    np.testing.assert_array_equal(result.product, model.vector(t))
    d = result.as_dict()
    info = SafetensorsFile(folder / "model.safetensors").tensors[model.tensor]
    assert d["cost"]["matrix_bytes"] == info.nbytes == e.nbytes
    assert d["cost"]["row_bytes"] == e[t].nbytes
    assert d["cost"]["product_flops"] == 2 * e.size
    assert d["tied"] is tied and d["one_hot"] == {"length": len(e), "position": t}


def test_an_inf_elsewhere_breaks_the_equality_and_it_is_reported(tmp_path):
    folder, e, _ = planted_model(tmp_path / "m", "F32")
    model = open_model(folder)
    damaged = e.copy()
    damaged[3, 5] = np.inf
    model.matrix = damaged  # in-memory stand-in for a damaged file
    result = explain.explain(model, 10)
    onehot = np.zeros(len(e), np.float32)
    onehot[10] = 1
    with np.errstate(invalid="ignore"):
        expected = int(np.count_nonzero(onehot @ damaged == damaged[10]))
    assert result.identical == expected == model.dim - 1
