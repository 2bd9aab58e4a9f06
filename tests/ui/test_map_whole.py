"""The map with very many points (the whole vocabulary): one item per colour draws them."""

from __future__ import annotations

import numpy as np

from explorer.core.analysis.kinds import KINDS
from explorer.ui.map.kind_colors import kind_palette
from explorer.ui.map.layers import LAYERED_ABOVE
from explorer.ui.map.view import MapView


def test_many_points_are_drawn_in_colour_layers_that_follow_the_colour_mode(qtbot):
    view = MapView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    n = LAYERED_ABOVE + 500
    rng = np.random.default_rng(0)
    codes = np.where(rng.random(n) < 0.5, KINDS.index("latin"), KINDS.index("digits"))
    view.set_kinds(codes, KINDS)
    coords = rng.standard_normal((n, 2)).astype(np.float32)
    view.set_points(np.arange(n), [f"t{i}" for i in range(n)], coords, norms=np.ones(n))
    view.set_colour_mode("kind")
    assert len(view.scatter.data) == 0  # the per-point item is empty
    sizes = [len(item._xy) for item in view._layers.items]
    assert sum(sizes) == n
    assert sizes[KINDS.index("latin")] == int((codes == KINDS.index("latin")).sum())
    image = view.graphics.grab().toImage()
    palette = kind_palette(KINDS)
    wanted = {KINDS.index("latin"), KINDS.index("digits")}
    pixels = np.array(
        [
            image.pixelColor(x, y).getRgb()[:3]
            for x in range(0, image.width(), 2)
            for y in range(0, image.height(), 2)
        ]
    )
    # drawn at alpha 220 over white: each channel within 35 of the kind's colour
    seen = {k for k in wanted if (np.abs(pixels - palette[k]).max(axis=1) <= 40).any()}
    assert seen == wanted  # both colours are on screen
    view.set_colour_mode("none")
    assert [len(item._xy) for item in view._layers.items][0] == n
    view.set_points(np.arange(10), [str(i) for i in range(10)], coords[:10])
    assert sum(len(item._xy) for item in view._layers.items) == 0  # few points: one item again
    assert len(view.scatter.data) == 10
