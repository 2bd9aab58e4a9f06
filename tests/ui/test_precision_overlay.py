"""A precision comparison reaches the rest of the window: the map coloured by each row's damage,
and the viewer's "Two precisions" page (both rows, their difference, each value's block and
scale). Real SmolLM2 rows in GGUF files written with gguf.GGUFWriter, checked against
gguf.quants."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from PySide6.QtCore import Qt
from safetensors.numpy import load_file

from explorer.ui.rows.precision_pair import EXACT
from explorer.ui.window.presentation import POINT_SIZE
from tests.support.models import stored, write_gguf
from tests.support.tokenizers import byte_level_bpe, gguf_tokenizer_keys
from tests.support.ui import idle

SLICE = Path(__file__).resolve().parents[1] / "data" / "smollm2_rows.safetensors"
T = gguf.GGMLQuantizationType


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict:
    """The same real rows stored as Q8_0 (the reference) and as Q4_0 (a second file)."""
    keys = gguf_tokenizer_keys(byte_level_bpe(True), "smollm")
    values = load_file(str(SLICE))["token_embd.weight"][: len(keys["tokens"])].astype(np.float32)
    folder = tmp_path_factory.mktemp("overlay")
    out: dict = {}
    for name in ("Q8_0", "Q4_0"):
        raw = stored(values, name)
        path = write_gguf(
            folder / f"m.{name}.gguf", {"token_embd.weight": (raw, name)}, tokenizer=keys
        )
        out[name] = (path, raw)
    return out


def dequantized(raw: np.ndarray, name: str) -> np.ndarray:
    return gguf.quants.dequantize(raw, T[name]).astype(np.float32)


def f16(block: np.ndarray, at: int) -> float:
    return float(block[at : at + 2].view(np.float16)[0])


def test_map_colours_points_by_the_relative_error_of_each_row(qtbot, make_window, files):
    path, raw = files["Q8_0"]
    win = make_window(path)
    quant, precision, pane = win.compare.quant, win.compare.precision, win.map_pane
    quant.sample = 20
    quant.simulate(["Q5_1", "Q4_0"])
    qtbot.waitUntil(lambda: quant.shown is not None, timeout=60000)
    idle(qtbot, win)
    assert pane.colour.findData("damage") >= 0  # offered once a comparison is there
    # a PCA map of a sample of tokens, then "Colour the map" on the Precision page
    pane.source.setCurrentIndex(pane.source.findData("sample"))
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    pane.n.setValue(150)
    pane.request_map()
    qtbot.waitUntil(lambda: pane.data is not None and pane.data.final, timeout=60000)
    win.compare.show_precision()
    precision.on_map.click()
    assert win.centre.currentWidget() is pane
    view = pane.view
    assert view.colour_mode == "damage" and pane.colour.currentData() == "damage"
    assert view.colour_bar.isVisible() and "Q4_0" in view.colour_bar.axis.labelText

    r = dequantized(raw, "Q8_0").astype(np.float64)
    used = win.state.model.used_rows

    def expected(name: str) -> np.ndarray:
        q = dequantized(gguf.quants.quantize(r.astype(np.float32), T[name]), name)
        rel = np.linalg.norm(q - r, axis=1) / np.linalg.norm(r, axis=1)
        return np.where(used, rel, np.nan)[view.ids]

    shown = view.values["damage"]
    assert len(shown) == 150 and np.isfinite(shown).sum() > 100
    np.testing.assert_allclose(shown, expected("Q4_0"), rtol=1e-6)
    # the points' colours rank by it: the most damaged point gets the top colour
    codes, palette, _steps = view.colour_codes()
    assert codes is not None and codes[np.nanargmax(shown)] == len(palette) - 2
    # another type chosen on the Precision page: the map follows
    precision.show_type(0)
    np.testing.assert_allclose(view.values["damage"], expected("Q5_1"), rtol=1e-6)
    assert "Q5_1" in view.colour_bar.axis.labelText
    # a token's two rows at the simulated type: the gguf package's own blocks
    token, viewer = 11, win.viewer
    win.state.select([token])
    qtbot.waitUntil(
        lambda: viewer.pair.shown is not None and viewer.pair.shown.pair.id == token,
        timeout=30000,
    )
    blocks = gguf.quants.quantize(r[token : token + 1].astype(np.float32), T["Q5_1"])
    model = viewer.pair.model
    column = {key: n for n, key in enumerate(model.keys)}
    q = dequantized(blocks, "Q5_1")[0]
    assert [model.data(model.index(i, column["other"]), EXACT) for i in range(576)] == q.tolist()
    block = blocks.view(np.uint8).reshape(-1, 24)[3]  # Q5_1: f16 scale, f16 min, 4 + 16 bytes
    for key, at in (("scale", 0), ("min", 2)):
        assert model.data(model.index(100, column[key]), EXACT) == f16(block, at)
    # no comparison any more (another model): the colour goes with it
    quant.model_changed(win.state.model)
    assert pane.colour.findData("damage") < 0 and view.colour_mode != "damage"


def test_viewer_overlays_the_two_rows_with_their_blocks(qtbot, make_window, files):
    ref_path, ref_raw = files["Q8_0"]
    other_path, other_raw = files["Q4_0"]
    win = make_window(ref_path)
    quant, precision, viewer = win.compare.quant, win.compare.precision, win.viewer
    quant.sample = 20
    win.compare.compare_with(other_path)
    qtbot.waitUntil(lambda: precision.files.isEnabled(), timeout=60000)
    precision.files.click()
    qtbot.waitUntil(lambda: quant.shown is not None, timeout=60000)
    token = 37
    win.state.select([token])
    qtbot.waitUntil(
        lambda: viewer.pair.shown is not None and viewer.pair.shown.pair.id == token,
        timeout=30000,
    )
    assert viewer.tabs.currentWidget() is viewer.pair
    model = viewer.pair.model
    column = {key: n for n, key in enumerate(model.keys)}
    assert list(column) == ["index", "ref", "other", "diff", "scale", "quant", "block", "ref scale"]
    r, q = dequantized(ref_raw, "Q8_0")[token], dequantized(other_raw, "Q4_0")[token]
    assert model.rowCount() == len(r) == 576

    def cell(i: int, key: str):
        return model.data(model.index(i, column[key]), EXACT)

    assert [cell(i, "ref") for i in range(576)] == r.tolist()
    assert [cell(i, "other") for i in range(576)] == q.tolist()
    ref_bytes = np.ascontiguousarray(ref_raw[token]).view(np.uint8).reshape(-1, 34)
    other_bytes = np.ascontiguousarray(other_raw[token]).view(np.uint8).reshape(-1, 18)
    for i in (0, 77, 575):
        b, j = divmod(i, 32)
        assert cell(i, "block") == b
        assert cell(i, "scale") == f16(other_bytes[b], 0)  # Q4_0: f16 scale, then 16 nibbles
        nibble = other_bytes[b, 2 + j % 16] >> (4 * (j // 16)) & 0x0F
        assert cell(i, "quant") == int(nibble) - 8
        assert cell(i, "ref scale") == f16(ref_bytes[b], 0)  # Q8_0: f16 scale, 32 int8
        assert cell(i, "diff") == float(np.float32(q[i] - r[i]))
        assert model.headerData(column["other"], Qt.Orientation.Horizontal) == "Q4_0"
    # the plot: both rows and their difference, the same values
    plot = viewer.pair.plot
    np.testing.assert_array_equal(plot.ref.getData()[1], r)
    np.testing.assert_array_equal(plot.error.getData()[1], q - r)
    # presentation mode: the table's digits in the large type
    win.host.show_tab(viewer)
    win.presenter.enter()
    assert model.data(model.index(0, 1), Qt.ItemDataRole.FontRole).pointSizeF() == POINT_SIZE
    win.presenter.leave()
    # the comparison ends with the model: the tab goes
    win.compare.quant.model_changed(win.state.model)
    assert not viewer.tabs.isTabVisible(viewer.tabs.indexOf(viewer.pair))
