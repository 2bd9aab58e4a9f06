"""`quant`: what quantisation does to an embedding, row by row: two files of one model, or the
model against itself quantised on the fly with the `gguf` package."""

from __future__ import annotations

import argparse

from explorer.cli import args as checks
from explorer.cli.common import Progress, print_json

MAX_SAMPLE = 100_000


def register(sub) -> None:
    p = sub.add_parser(
        "quant",
        help="what quantisation does to the embedding: two precisions of one model, row by row",
        description="Compares one embedding at two precisions over every row (relative error "
        "‖q − r‖/‖r‖, cosine, norm ratio) and the cosine top-10 neighbours of a sample of "
        "tokens (exact, or from sign-code shortlists scored exactly on large matrices). Give "
        "two files of one model (-m REF -m OTHER; the vocabularies must match row for row), "
        "or one model and --simulate TYPES to quantise it in memory.",
    )
    p.add_argument(
        "-m",
        "--model",
        action="append",
        metavar="PATH",
        required=True,
        help="the reference model; a second -m is the other precision",
    )
    p.add_argument(
        "--simulate",
        type=checks.type_names,
        metavar="TYPES",
        help="quantise the reference to these types, e.g. Q8_0,Q5_1,Q4_0",
    )
    p.add_argument(
        "--sample",
        type=checks.int_range(0, MAX_SAMPLE, "--sample"),
        default=2000,
        metavar="N",
        help="tokens whose neighbours are compared (default 2000; 0: none)",
    )
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from explorer.core.errors import ExplorerError
    from explorer.core.model.open import open_model
    from explorer.core.quant.precision import check_type
    from explorer.core.quant.report import compare_files, compare_simulated

    files = len(args.model)
    if files > 2 or (files == 2) == bool(args.simulate):
        raise ExplorerError(
            "quant compares two files (-m REF -m OTHER) or one file with --simulate TYPES"
        )
    ref = open_model(args.model[0])
    for name in args.simulate or []:
        check_type(name, ref.dim)
    progress = Progress("quant")
    if args.simulate:
        reports = compare_simulated(ref, args.simulate, args.sample, progress)
    else:
        reports = [compare_files(ref, open_model(args.model[1]), args.sample, progress)]
    progress.end(clear=True)
    tok = ref.tokenizer
    piece = tok.piece if tok is not None else (lambda i: None)
    results = [r.as_dict(piece) for r in reports]
    if args.json:
        print_json(results if args.simulate and len(results) > 1 else results[0])
        return 0
    _print_summary(results, args.model[0])
    for r in results:
        print()
        print(f"{r['type']}: the {len(r['worst'])} most damaged tokens")
        print(f"{'id':>8}  {'relative error':>14}  token")
        for w in r["worst"]:
            print(f"{w['id']:>8}  {w['relative_error']:>14.4f}  {ref.label(w['id'])}")
    return 0


def _cell(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_summary(results: list[dict], path: str) -> None:
    first = results[0]
    print(f"reference: {first['reference']} ({first['rows']:,} rows with a token)")
    head = (
        f"{'type':<10} {'rel.err median':>14} {'p99':>8} {'max':>8} "
        f"{'cosine median':>13} {'min':>8} {'top-10 overlap':>14} {'rank shift':>10}"
    )
    print(head)
    for r in results:
        rel, cos, top = r["relative_error"], r["cosine"], r["top10_overlap"]
        approximate = top.get("method") == "approximate"
        overlap = _cell(top["mean"], 3) + (
            f" ({top['sample']}{'≈' if approximate else ''})" if top["sample"] else ""
        )
        print(
            f"{r['type']:<10} {_cell(rel['median']):>14} {_cell(rel['p99']):>8} "
            f"{_cell(rel['max']):>8} {_cell(cos['median'], 5):>13} {_cell(cos['min'], 5):>8} "
            f"{overlap:>14} {_cell(r['rank_displacement']['mean'], 2):>10}"
        )
    print("relative error ‖q − r‖/‖r‖ per row; top-10 overlap: share of each sampled token's")
    print("cosine top-10 neighbours that both precisions agree on (sample size in brackets);")
    print("rank shift: mean |change of rank| of those ten at the other precision (ranks past 50")
    print("count as 50)")
    if any(r["top10_overlap"].get("method") == "approximate" for r in results):
        print("≈: neighbours found from sign-code shortlists of every row at both precisions, then")
        print("scored exactly (the matrix is too large for an exact scan of every sampled token)")
