"""The map pane's export: the view as shown (.png), the map figure (.svg, the same as
`embedding-explorer project --out map.svg`), or the coordinates (.csv / .json)."""

from __future__ import annotations

from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.map import figure
from explorer.core.map.pipeline import MapData
from explorer.ui.widgets.grab import SCALES, grab_png

__all__ = ["SCALES", "write_map"]  # SCALES: the PNG resolutions the pane offers


def write_map(view, data: MapData, path: Path, scale: int = 1) -> None:
    """The map by file type: .png (the view as shown, at `scale`), .svg (vector shapes, the
    same figure as `embedding-explorer project --out map.svg`), coordinates .csv / .json."""
    kind = path.suffix.lower()
    nb = data.nb
    if kind == ".png":
        grab_png(view, path, scale)
    elif kind == ".svg":
        path.write_text(figure.neighborhood_svg(nb, data.coords), encoding="utf-8")
    elif kind == ".csv":
        path.write_text(figure.coordinates_csv(nb.ids, nb.labels, data.coords), encoding="utf-8")
    elif kind == ".json":
        text = figure.coordinates_json(
            nb.ids, nb.labels, data.coords, title=nb.title, final=data.final
        )
        path.write_text(text, encoding="utf-8")
    else:
        raise ExplorerError(f"{path.name}: export as .png, .svg, .csv or .json")
