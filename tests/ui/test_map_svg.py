"""The GUI's map SVG is the CLI's vector figure: one <circle> per point, no raster images."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import Qt

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def pane(make_map_pane):
    return make_map_pane()


def make_map(qtbot, pane, source: str, n: int) -> None:
    pane.source.setCurrentIndex(pane.source.findData(source))
    pane.method.setCurrentIndex(pane.method.findData("pca"))
    pane.n.setValue(n)
    with qtbot.waitSignal(pane.mapShown, timeout=30000):
        qtbot.mouseClick(pane.map_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not pane.controller.lane.busy)


def test_sample_map_svg_has_one_circle_per_point_and_no_image(qtbot, pane, tmp_path):
    make_map(qtbot, pane, "sample", 150)
    pane.export(tmp_path / "m.svg")
    root = ET.parse(tmp_path / "m.svg").getroot()
    assert len(root.findall(f".//{SVG}circle")) == len(pane.data.nb) == 150
    assert root.findall(f".//{SVG}image") == []
    assert (tmp_path / "m.svg").stat().st_size < 100_000  # was 1.66 MB of symbol-atlas images


def test_map_around_a_token_marks_the_query_and_labels_it(qtbot, pane, tmp_path):
    cat = pane.state.model.tokenizer.find("cat")
    pane.state.select([cat])
    make_map(qtbot, pane, "around", 120)
    pane.export(tmp_path / "m.svg")
    root = ET.parse(tmp_path / "m.svg").getroot()
    circles = root.findall(f".//{SVG}circle")
    # every point, plus the "query" key beside the colour bar
    assert len(circles) == len(pane.data.nb) + 1
    assert root.findall(f".//{SVG}image") == []
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "cat" in texts and "query" in texts
