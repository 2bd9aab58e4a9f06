"""`project --all`: every row of the model on one map (explorer.core.map.whole), as a figure or
coordinates, with its progress on stderr."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from explorer.cli import args as args_
from explorer.cli.common import Progress, load_model, write_png
from explorer.core.errors import ExplorerError
from explorer.core.map import figure, projection, tiles, whole, whole_figure


class StageProgress(Progress):
    """Progress lines that name the stage (first picture, neighbour graph, UMAP epochs)."""

    def progress(self, fraction: float, text: str = "") -> None:
        if fraction - self._last < self.every and fraction < 1.0:
            return
        self._last = fraction
        line = f"{self.what}: {100 * fraction:5.1f} %  {text[:60]}"
        sys.stderr.write(f"\r{line:<90}" if self.tty else f"{line}\n")
        sys.stderr.flush()


def run(args: argparse.Namespace, out: Path, suffix: str) -> int:
    projection.configure_numba_cache()
    model = load_model(args)
    params = whole.WholeParams(
        n_neighbors=args.n_neighbors,
        min_dist=args.min_dist,
        seed=args.seed,
        n_epochs=args.n_epochs,
    )
    ctx = StageProgress("whole-vocabulary map", lines=True, step=0.02)
    start = time.perf_counter()

    def first_picture(_value: object) -> None:
        took = time.perf_counter() - start
        sys.stderr.write(f"first picture (PCA) of {model.rows:,} rows: {took:.1f} s\n")

    ctx._partial = first_picture
    if args.method == "pca":
        coords = whole.first_picture(model, params, ctx)
        result = whole.WholeMap(coords, whole.hidden_rows(model), final=True, stage="pca")
    else:
        result = whole.whole_map(model, params, ctx)
    ctx.end()
    how = "cached layout" if result.cached else f"{time.perf_counter() - start:.1f} s"
    sys.stderr.write(f"{result.stage.upper()} map of {model.rows:,} rows: {how}\n")

    keep = ~result.hidden if args.plain else np.ones(model.rows, dtype=bool)
    if suffix == ".npy":
        coords = result.coords.copy()
        coords[~keep] = np.nan
        try:
            np.save(out, coords, allow_pickle=False)
        except OSError as e:
            raise ExplorerError(f"{out}: cannot write ({e.strerror or e})") from None
        return 0
    ids = np.flatnonzero(keep)
    labels = [model.label(int(i)) for i in ids]
    coords = result.coords[ids]
    if suffix in (".csv", ".json"):
        if suffix == ".csv":
            text = figure.coordinates_csv(ids, labels, coords)
        else:
            text = figure.coordinates_json(
                ids, labels, coords, title="whole vocabulary", model=str(model.path),
                method=result.stage, n_neighbors=params.n_neighbors,
                min_dist=params.min_dist, seed=params.seed,
            )  # fmt: skip
        if args.json:
            sys.stdout.write(text)
        else:
            args_.write_text_file(out, text)
        return 0
    if suffix == ".svg":
        args_.write_text_file(out, figure_svg(model, result, ids, labels, coords, args))
    else:  # drawn here: tiles named by tokens this machine's fonts draw (no empty boxes)
        from explorer.render.glyphs import default_coverage

        usable = default_coverage().usable(labels)
        write_png(figure_svg(model, result, ids, labels, coords, args, usable), out)
    return 0


def figure_svg(model, result: whole.WholeMap, ids, labels, coords, args, usable=None) -> str:
    """The figure of the map: a density image coloured by token kind, labels naming the tiles
    of its quadtree (by tokens `usable` accepts), the kinds' legend."""
    from explorer.core.analysis.kinds import KINDS, token_kinds
    from explorer.core.map.kind_colors import kind_palette, legend_entries

    codes = token_kinds(model).codes.astype(np.int64)[ids]
    width, height = args.size
    return whole_figure.whole_map_svg(
        coords,
        labels,
        tiles.build(coords, tiles.token_priority(ids, labels)),
        title=args.title or f"The whole vocabulary: {len(ids):,} tokens",
        subtitle=(
            f"{model.path.name} · {model.tensor} {model.rows:,} × {model.dim} {model.dtype} · "
            f"{'UMAP (cosine)' if result.stage == 'umap' else 'PCA of unit-length rows'}"
        ),
        codes=codes,
        palette=kind_palette(list(KINDS)),
        legend=legend_entries(codes, list(KINDS)),
        legend_title="token kind",
        width=width,
        height=height,
        usable=usable,
    )
