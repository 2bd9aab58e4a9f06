"""A session (and a slide) keeps the map's layout: opened again, the same points are in the same
places without a new layout, at the saved zoom."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.ui import idle


def test_the_map_layout_and_zoom_come_back(qtbot, make_window, tiny_model, tmp_path):
    path, _ = tiny_model
    a = make_window(path)
    a.centre.setCurrentWidget(a.map_pane)
    pane = a.map_pane
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    a.state.select([4])
    pane.source.setCurrentIndex(pane.source.findData("around"))
    pane.n.setValue(10)
    pane.request_map()
    qtbot.waitUntil(lambda: pane.data is not None and pane.data.final, timeout=60000)
    idle(qtbot, a)
    pane.view.viewbox.setRange(xRange=(-0.5, 0.25), yRange=(-0.3, 0.4), padding=0)
    ids, coords = pane.data.nb.ids.copy(), pane.data.coords.copy()
    a.sessions.save_to(tmp_path / "map.eesession.json")
    saved = json.loads((tmp_path / "map.eesession.json").read_text(encoding="utf-8"))
    assert saved["map"]["layout"]["ids"] == ids.tolist()
    assert saved["map"]["layout"]["query"] == [4]

    b = make_window()
    with qtbot.waitSignal(b.sessions.controller.loaded, timeout=30000):
        b.sessions.controller.open(tmp_path / "map.eesession.json")
    qtbot.waitUntil(lambda: b.map_pane.data is not None, timeout=60000)
    idle(qtbot, b)
    data = b.map_pane.data
    assert data.final and data.nb.ids.tolist() == ids.tolist()
    np.testing.assert_allclose(data.coords, coords, atol=1e-5)
    assert data.nb.query_ids == (4,) and data.nb.similarity is not None
    assert data.nb.similarity[list(ids).index(4)] == pytest.approx(1.0, abs=1e-5)
    (x0, x1), (y0, y1) = b.map_pane.view.viewbox.viewRange()
    rx0, ry0, rx1, ry1 = saved["map"]["view"]  # the zoom as shown (aspect kept) in the first
    assert (y0, y1) == pytest.approx((-0.3, 0.4), abs=1e-6)
    assert (x0, x1, y0, y1) == pytest.approx((rx0, rx1, ry0, ry1), abs=1e-6)
    assert b.map_pane.title.text().startswith(data.nb.title[:1].upper())
