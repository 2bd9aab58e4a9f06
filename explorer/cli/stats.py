"""`stats`: vocabulary statistics — row norms, per-dimension mean/std and rogue dimensions,
suspicious (possibly under-trained) tokens, tokens by kind. One streaming pass, cached per file.

--out writes a per-token CSV (or per-dimension with --table dimensions) or a PNG/SVG figure;
PNG rasterises the SVG with QtSvg (explorer/render), as `project` does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from explorer.cli import args as args_
from explorer.cli.common import Progress, add_model_options, load_model, print_json, write_png
from explorer.core.errors import ExplorerError

FORMATS = (".csv", ".png", ".svg")


def register(sub) -> None:
    p = sub.add_parser(
        "stats",
        help="vocabulary statistics: norms, dimensions, suspicious tokens, token kinds",
        description="One streaming pass over the embedding matrix (cached per file): row norms, "
        "per-dimension mean and std with rogue dimensions, suspicious tokens (zero, tiny or huge "
        "norms, close to the mean of unused rows) and tokens by kind.",
    )
    add_model_options(p)
    p.add_argument("--out", metavar="FILE", help="write .csv (a table), .png or .svg (a figure)")
    p.add_argument(
        "--table",
        choices=("tokens", "dimensions"),
        default="tokens",
        help="CSV rows: one per token (default) or one per dimension",
    )
    p.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower() not in FORMATS:
        raise ExplorerError(f"{out.name}: unknown output type; use one of {', '.join(FORMATS)}")
    from explorer.core.analysis import stats_export  # numpy/numba work
    from explorer.core.analysis.stats import compute_stats

    model = load_model(args)
    progress = Progress("reading the matrix", step=0.01)
    result = compute_stats(model, progress, use_cache=not args.no_cache)
    progress.end(clear=True)
    if result.cache_note:
        print(f"note: {result.cache_note}", file=sys.stderr)
    if out is not None:
        suffix = out.suffix.lower()
        if suffix == ".csv":
            text = (
                stats_export.tokens_csv(model, result)
                if args.table == "tokens"
                else stats_export.dimensions_csv(result)
            )
            args_.write_text_file(out, text)
        else:
            from explorer.core.analysis.stats_figure import stats_svg

            subtitle = f"{model.path.name} · {model.tensor} · {model.dtype}"
            svg = stats_svg(result, subtitle)
            if suffix == ".svg":
                args_.write_text_file(out, svg)
            else:
                write_png(svg, out)
    if args.json:
        print_json(result.as_dict())
    elif out is None:
        sys.stdout.write(stats_export.summary_text(model, result))
    return 0
