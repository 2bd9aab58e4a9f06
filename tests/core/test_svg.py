"""The shared SVG writer and the map figure of a neighbourhood (what `project` and the window's
map export write)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from explorer.core import svg
from explorer.core.analysis.charts import bars
from explorer.core.map import figure
from explorer.core.map.neighborhood import Neighborhood

NS = "{http://www.w3.org/2000/svg}"


def texts(document: str) -> list[str | None]:
    return [t.text for t in ET.fromstring(document).iter(f"{NS}text")]


def test_a_document_holds_escaped_text_and_is_safe_to_write_as_utf8():
    name = b"ab\xffc".decode("utf-8", errors="surrogateescape")  # a folder that is not UTF-8
    doc = svg.document(300, 200, [svg.text(10, 20, f"<{name}> & co", 12, fill="#555")])
    doc.encode("utf-8")
    root = ET.fromstring(doc)
    assert root.get("width") == "300" and root.get("viewBox") == "0 0 300 200"
    assert texts(doc) == ["<ab\ufffdc> & co"]
    assert svg.colour((214, 39, 40)) == "#d62728"


def test_text_width_counts_wide_characters_as_one_em():
    assert svg.text_width("猫猫", 10) == 20.0
    assert svg.text_width("Ab", 10) < svg.text_width("A猫", 10)


def test_chart_panels_and_the_map_write_text_the_same_way():
    panel = bars((0, 0, 400, 300), [3, 1, 2], "Kinds <log>", labels=["a", "b", "c"])
    doc = svg.document(400, 300, panel)
    assert "Kinds <log>" in texts(doc)
    fonts = {t.get("font-family") for t in ET.fromstring(doc).iter(f"{NS}text")}
    assert fonts == {svg.FONT}


def neighbourhood(query_ids: tuple[int, ...], title: str = "3 tokens around “Cat”") -> Neighborhood:
    ids = np.array([10, 11, 12], dtype=np.int64)
    sim = np.array([1.0, 0.6, 0.3], dtype=np.float32)
    return Neighborhood(ids, ["Cat", "dog", "<b>"], sim, query_ids, title)


def test_the_neighbourhood_figure_names_its_query_and_keeps_the_title_s_case():
    coords = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]])
    shown = texts(figure.neighborhood_svg(neighbourhood((10,)), coords))
    assert "3 tokens around “Cat”" in shown and "cosine to “Cat”" in shown and "query" in shown
    several = texts(figure.neighborhood_svg(neighbourhood((10, 11), "two"), coords, title="T"))
    assert "T" in several and "cosine to the nearest query token" in several
    assert texts(figure.neighborhood_svg(neighbourhood((), "sample"), coords))[0] == "Sample"
