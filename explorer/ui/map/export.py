"""The map pane's export: the view as shown (.png), the map figure (.svg, the same as
`embedding-explorer project --out map.svg`), the figure as a 4K PNG, or the coordinates
(.csv / .json). A map of very many points (the whole vocabulary) exports its figure as a
density image with labels naming its tiles (explorer/core/map/whole_figure.py), of the part in
view."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.map import figure, whole_figure
from explorer.core.map.pipeline import MapData
from explorer.render.glyphs import Coverage
from explorer.render.raster import svg_to_png
from explorer.ui.widgets.grab import SCALES, grab_png

__all__ = [
    "FIGURE_4K",
    "SCALES",
    "figure_writer",
    "write_map",
]  # SCALES: the PNG resolutions the pane offers

FIGURE_4K = (3840, 2160)
FIGURE_SIZE = (1920, 1080)


def write_map(view, data: MapData, path: Path, scale: int = 1, figure_size=None) -> None:
    """The map by file type: .png (the view as shown, at `scale`; or the figure, at
    `figure_size`), .svg (the figure, as `embedding-explorer project --out map.svg` draws
    it), coordinates .csv / .json."""
    kind = path.suffix.lower()
    nb = data.nb
    if kind == ".svg" or (kind == ".png" and figure_size is not None):
        figure_writer(view, data, path, figure_size or FIGURE_SIZE)()
    elif kind == ".png":
        grab_png(view, path, scale)
    elif kind == ".csv":
        path.write_text(figure.coordinates_csv(nb.ids, nb.labels, data.coords), encoding="utf-8")
    elif kind == ".json":
        text = figure.coordinates_json(
            nb.ids, nb.labels, data.coords, title=nb.title, final=data.final
        )
        path.write_text(text, encoding="utf-8")
    else:
        raise ExplorerError(f"{path.name}: export as .png, .svg, .csv or .json")


def figure_writer(view, data: MapData, path: Path, size: tuple[int, int]) -> Callable[[], Path]:
    """What writes the map's figure at `size` to `path` (.svg, else .png), with what it needs
    taken from the view now: a function that a worker thread may run (the figure of a quarter-
    million points takes about a second)."""
    svg = figure_svg_maker(view, data, size)

    def write() -> Path:
        text = svg()
        if path.suffix.lower() == ".svg":
            path.write_text(text, encoding="utf-8")
        else:
            svg_to_png(text, path)
        return path

    return write


def figure_svg(view, data: MapData, size: tuple[int, int]) -> str:
    """The map's figure at `size` (see figure_svg_maker)."""
    return figure_svg_maker(view, data, size)()


def figure_svg_maker(view, data: MapData, size: tuple[int, int]) -> Callable[[], str]:
    """What draws the map's figure at `size`: for very many points the part in view, coloured
    as shown; otherwise the whole neighbourhood, as `project --out` draws it."""
    width, height = size
    quadtree = view.cloud.tiles
    if quadtree is None:
        return lambda: figure.neighborhood_svg(data.nb, data.coords, width=width, height=height)
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    codes, palette, steps = view.colour_codes()
    legend, legend_title = view.legend_entries()
    coords, labels = view.coords, view.labels
    font = view.label_font()  # tiles named by tokens it draws, as in the window
    return lambda: whole_figure.whole_map_svg(
        coords,
        labels,
        quadtree,
        usable=Coverage(font).usable(labels),
        title=data.nb.title[:1].upper() + data.nb.title[1:],
        codes=codes,
        palette=palette,
        steps=steps,
        legend=legend,
        legend_title=legend_title,
        view=(x0, y0, x1, y1),
        width=width,
        height=height,
    )
