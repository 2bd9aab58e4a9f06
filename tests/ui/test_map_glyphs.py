"""Labels of the whole-vocabulary map in scripts no installed font covers: a tile is named by
a token the label font can draw, or left unnamed, never by one that would show as empty boxes."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtGui import QFont, QFontMetrics

from explorer.core.map import tiles
from explorer.core.map.neighborhood import Neighborhood
from explorer.core.map.pipeline import MapData
from explorer.render.glyphs import Coverage
from explorer.ui.map import export
from explorer.ui.map.layers import LAYERED_ABOVE
from explorer.ui.map.view import MapView

N = LAYERED_ABOVE + 2000
# a private-use character, an unassigned one, and non-characters: no font on any machine is
# likely to draw all of them
PROBES = ("\ue000", "\u0378", "\U000e0fff", "\ufdd0", "\U0010fffe")


def undrawn_char(font: QFont) -> str:
    metrics = QFontMetrics(font)
    found = next((ch for ch in PROBES if not metrics.inFontUcs4(ord(ch))), None)
    if found is None:
        pytest.skip("some font here draws every probe character")
    if not all(metrics.inFontUcs4(ord(ch)) for ch in "w0123456789"):
        pytest.skip("no font here draws plain Latin letters")
    return found


def shown_view(make_map_view) -> tuple[MapView, str]:
    """A map view on screen, and a character its label font cannot draw."""
    v = make_map_view(900, 600)
    return v, undrawn_char(v.label_font())


def test_coverage_tells_drawable_text_and_spells_out_the_rest(qapp):
    font = QFont()
    bad = undrawn_char(font)
    coverage = Coverage(font)
    assert coverage.draws("cat 12") and not coverage.draws(f"c{bad}t")
    assert coverage.drawable(f"c{bad}t") == f"cU+{ord(bad):04X}t"
    mask = coverage.usable(["cat", f"{bad}x", "dog"])(np.array([2, 1, 0]))
    assert mask.tolist() == [True, False, True]


def test_tiles_are_named_by_tokens_the_font_draws(qtbot, make_map_view):
    """Left blob: every token undrawable. Right blob: each tile's best token is undrawable (even
    positions come first by priority), the next is drawable."""
    v, bad = shown_view(make_map_view)
    rng = np.random.default_rng(0)
    coords = np.concatenate(
        [rng.standard_normal((N // 2, 2)) + [-4, 0], rng.standard_normal((N - N // 2, 2)) + [4, 0]]
    ).astype(np.float32)
    left = np.arange(N) < N // 2
    undrawn = left | (np.arange(N) % 2 == 0)
    labels = [f"{bad}{i}" if u else f"w{i}" for i, u in enumerate(undrawn)]
    # the right blob's points in pairs at one place: a tile holding one holds both
    coords[~left & (np.arange(N) % 2 == 1)] = coords[~left & (np.arange(N) % 2 == 0)]
    priority = np.arange(N)
    v.set_points(np.arange(N), labels, coords, tile_index=tiles.build(coords, priority))
    # without the check, the right blob's tiles would be named by undrawable tokens
    rect = (-8.0, -4.0, 8.0, 4.0)
    plain = v.cloud.tiles.labels_in(rect, 16 / 900, 90)
    assert undrawn[plain[~left[plain]]].all()
    qtbot.waitUntil(lambda: not v.labels_pending)
    shown = [token for token, _ in v.visible_labels()]
    assert len(shown) >= 5
    assert not undrawn[shown].any()  # no empty boxes
    assert not left[shown].any()  # the blob without a drawable token is left unnamed
    for token, text in v.visible_labels():
        assert text == labels[token]
    # the figure export names the same tiles: no label of a token the font cannot draw
    nb = Neighborhood(np.arange(N), labels, None, (), "the whole vocabulary")
    data = MapData(nb, np.zeros((N, 0), np.float32), np.empty(0), coords, final=True)
    svg = export.figure_svg(v, data, export.FIGURE_SIZE)
    named = [int(m) for m in re.findall(r">w(\d+)</text>", svg)]
    assert len(named) >= 5 and not undrawn[named].any()
    assert bad not in svg


def test_a_small_map_labels_only_tokens_the_font_draws_besides_the_query(qtbot, make_map_view):
    v, bad = shown_view(make_map_view)
    n = 300
    rng = np.random.default_rng(1)
    coords = rng.standard_normal((n, 2)).astype(np.float32)
    undrawn = np.arange(n) % 2 == 0
    labels = [f"{bad}{i}" if u else f"w{i}" for i, u in enumerate(undrawn)]
    similarity = np.linspace(1.0, 0.0, n)  # the undrawable ones come first too
    v.set_points(np.arange(n), labels, coords, similarity=similarity, highlight=[0])
    qtbot.waitUntil(lambda: not v.labels_pending)
    shown = [token for token, _ in v.visible_labels()]
    assert 0 in shown  # the query keeps its label whatever it shows
    others = [t for t in shown if t != 0]
    assert len(others) >= 10 and not undrawn[others].any()


def test_hovering_a_token_the_font_cannot_draw_names_its_characters(make_map_view):
    v, bad = shown_view(make_map_view)
    v.set_points(np.arange(3), ["cat", f"{bad}x", "dog"], np.eye(3, 2, dtype=np.float32))
    assert v.describe(1).startswith(f"U+{ord(bad):04X}x") and v.describe(0).startswith("cat")
