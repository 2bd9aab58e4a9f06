"""The values table of a quantised GGUF row: each value beside its block's scale and quant."""

from __future__ import annotations

import gguf
import numpy as np
import pytest
from PySide6.QtCore import Qt

from explorer.core.model.open import open_model
from explorer.core.rows.read import load_rows
from explorer.ui.rows import quant_columns as qc
from explorer.ui.rows.values_table import VALUE, ValuesTable
from tests.support.models import random_matrix, stored, write_gguf

_USER = 256  # Qt.UserRole: exact machine values


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_1"])
def test_quantised_row_shows_scale_and_quants(qtbot, tmp_path, type_name):
    values = random_matrix(9, 64, seed=3)
    raw = stored(values, type_name)
    path = write_gguf(
        tmp_path / "m.gguf", {"token_embd.weight": (raw, type_name)}, {"llama.vocab_size": 9}
    )
    model = open_model(path)
    row = load_rows(model, [5])[0]
    table = ValuesTable()
    qtbot.addWidget(table)
    table.set_row(row)
    m = table.model
    headers = [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())]
    assert "no bit layout" not in table.caption.text() and "scale × quant" in table.caption.text()
    assert headers[qc.SCALE] == "scale" and headers[qc.QUANT] == "quant"
    assert (qc.MINIMUM < len(headers)) == (type_name == "Q4_1")
    # an independent decoding of the stored block: its float16 scale (and minimum) and quants
    block_size, block_bytes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[type_name]]
    for i in (0, 33, 63):
        b, j = divmod(i, block_size)
        block = np.ascontiguousarray(raw[5]).view(np.uint8)[b * block_bytes : (b + 1) * block_bytes]
        scale = float(block[:2].view(np.float16)[0])
        assert m.data(m.index(i, qc.SCALE), _USER) == scale
        assert m.data(m.index(i, qc.BLOCK), _USER) == b
        q = m.data(m.index(i, qc.QUANT), _USER)
        expected = np.float32(scale) * np.float32(q)
        if type_name == "Q4_1":
            minimum = float(block[2:4].view(np.float16)[0])
            assert m.data(m.index(i, qc.MINIMUM), _USER) == minimum
            expected = expected + np.float32(minimum)
            assert 0 <= q < 16
        else:
            assert -128 <= q < 128 and q == int(block[2 + j : 3 + j].view(np.int8)[0])
        assert m.data(m.index(i, VALUE), _USER) == float(expected)
        assert f"× {q}" in m.data(m.index(i, VALUE), 3)  # the tooltip spells it out
    model.close()
