"""`project`: a 2-D map of a neighbourhood as a finished figure (PNG/SVG) or coordinates (CSV/JSON).

SVG, CSV and JSON are written by the Qt-free core. PNG rasterises the same SVG with QtSvg
(explorer/render: QtGui only, offscreen): no Qt-free raster text renderer is among the
dependencies, and a figure without real text rendering would not be legible at slide size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from explorer.cli import args as args_
from explorer.cli import project_all
from explorer.cli.common import add_model_options, load_model, write_png
from explorer.core import limits
from explorer.core.errors import ExplorerError
from explorer.core.map import figure, neighborhood, projection
from explorer.core.tokenizer.text import parse_token_ref

FORMATS = (".png", ".svg", ".csv", ".json")
ALL_FORMATS = (*FORMATS, ".npy")


def register(sub) -> None:
    p = sub.add_parser(
        "project", help="map a neighbourhood to 2-D (UMAP or PCA): figure or coordinates"
    )
    add_model_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--around",
        type=args_.text,
        metavar="TOKEN",
        help="a token (text or #id) and its nearest tokens",
    )
    which.add_argument(
        "--text",
        type=args_.text,
        metavar="PHRASE",
        help="the tokens of a phrase and their nearest tokens",
    )
    which.add_argument(
        "--ids",
        type=args_.text,
        metavar="LIST",
        help="comma-separated ids or tokens, e.g. 1,2,cat,#5",
    )
    which.add_argument(
        "--all",
        action="store_true",
        help="every row of the model (the whole vocabulary; cached per model file)",
    )
    which.add_argument(
        "--sample",
        type=args_.int_range(1, neighborhood.MAX_SAMPLE, "the sample size"),
        metavar="N",
        help=f"a random sample of N tokens (≤ {neighborhood.MAX_SAMPLE:,})",
    )
    p.add_argument(
        "-n",
        type=args_.int_range(1, neighborhood.MAX_AROUND, "n"),
        default=neighborhood.DEFAULT_N,
        help=f"points for --around/--text (default {neighborhood.DEFAULT_N}, "
        f"up to {neighborhood.MAX_AROUND:,})",
    )
    p.add_argument(
        "--method", choices=projection.METHODS, default="umap", help="layout (default umap)"
    )
    defaults = projection.ProjectionParams()
    p.add_argument(
        "--seed",
        type=args_.int_range(0, limits.MAX_SEED, "seed"),
        default=defaults.seed,
        help=f"random seed, 0 to {limits.MAX_SEED:,} (default {defaults.seed})",
    )
    p.add_argument(
        "--n-neighbors",
        type=args_.int_range(2, projection.MAX_NEIGHBORS, "n_neighbors"),
        default=defaults.n_neighbors,
        help=f"UMAP neighbours (default {defaults.n_neighbors})",
    )
    p.add_argument(
        "--min-dist",
        type=args_.float_range(0.0, 1.0, "min_dist"),
        default=defaults.min_dist,
        help=f"UMAP min_dist (default {defaults.min_dist})",
    )
    p.add_argument(
        "--n-epochs",
        type=args_.int_range(1, limits.MAX_EPOCHS, "n_epochs"),
        help=f"UMAP epochs, at most {limits.MAX_EPOCHS:,} "
        "(default: 500 below 10,000 points, else 200)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="with --all: leave out rows beyond the tokenizer and special tokens "
        "(NaN in .npy, which keeps one row per id)",
    )
    p.add_argument(
        "--title",
        type=args_.text,
        help="figure title (default: describes the selection)",
    )
    p.add_argument(
        "--size",
        type=args_.pixel_size,
        default="1920x1080",
        metavar="WxH",
        help="figure size in pixels (default 1920x1080)",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="output: .png, .svg, .csv or .json (or --json for stdout); with --all also .npy",
    )
    p.set_defaults(func=run)


def select(model, args: argparse.Namespace) -> neighborhood.Neighborhood:
    if args.around is not None:
        token_id = model.check_id(parse_token_ref(args.around, model.tokenizer))
        return neighborhood.around(model, token_id, args.n)
    if args.text is not None:
        return neighborhood.around_text(model, args.text, args.n)
    if args.ids is not None:
        return neighborhood.from_list(model, args.ids)
    return neighborhood.sample(model, args.sample, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    if args.out is None and not args.json:
        raise ExplorerError("project needs --out FILE (.png, .svg, .csv, .json) or --json")
    if args.out is not None and args.json:
        raise ExplorerError("use either --out FILE or --json (coordinates on stdout), not both")
    out = Path(args.out or "stdout.json")
    suffix = out.suffix.lower()
    formats = ALL_FORMATS if args.all else FORMATS
    if suffix not in formats:
        raise ExplorerError(f"{out.name}: unknown output type; use one of {', '.join(formats)}")
    if args.all:
        return project_all.run(args, out, suffix)
    params = projection.ProjectionParams(
        method=args.method,
        n_neighbors=args.n_neighbors,
        min_dist=args.min_dist,
        seed=args.seed,
        n_epochs=args.n_epochs,
    )
    projection.configure_numba_cache()  # before the neighbour scan loads its numba kernels
    model = load_model(args)
    nb = select(model, args)
    coords = projection.project(model.vectors(nb.ids), params)
    method = "PCA" if args.method == "pca" or len(nb) < 8 else "UMAP"
    details = (
        f"cosine, n_neighbors={params.n_neighbors}, min_dist={params.min_dist:g}, "
        f"seed {params.seed}"
        if method == "UMAP"
        else "of unit-length rows"
    )
    subtitle = (
        f"{model.path.name} · {model.tensor} {model.rows:,} × {model.dim} {model.dtype} · "
        f"{method} ({details})"
    )
    if suffix == ".csv":
        args_.write_text_file(out, figure.coordinates_csv(nb.ids, nb.labels, coords))
        return 0
    if suffix == ".json":
        text = figure.coordinates_json(
            nb.ids,
            nb.labels,
            coords,
            title=nb.title,
            model=str(model.path),
            method=method.lower(),
            n_neighbors=params.n_neighbors,
            min_dist=params.min_dist,
            seed=params.seed,
            query_ids=list(nb.query_ids),
        )
        if args.json:
            sys.stdout.write(text)
        else:
            args_.write_text_file(out, text)
        return 0
    width, height = args.size
    svg = figure.neighborhood_svg(
        nb, coords, title=args.title, subtitle=subtitle, width=width, height=height
    )
    if suffix == ".svg":
        args_.write_text_file(out, svg)
    else:
        write_png(svg, out)
    return 0
