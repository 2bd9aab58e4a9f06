"""`neighbors`: the nearest rows to a token, phrase, vector expression or id."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from explorer.api.model import Model
from explorer.cli import args as args_
from explorer.cli.common import add_model_options, load_model, print_json
from explorer.core.search.neighbors import MAX_K, METRICS, query_for_expression, query_for_text

if TYPE_CHECKING:
    from explorer.core.search.queries import Query


def register(sub) -> None:
    p = sub.add_parser(
        "neighbors",
        help="nearest tokens to a token, phrase or vector expression",
        description="Top-k nearest rows of the embedding matrix. By default the cheaper path "
        "known to be right: exact search for small matrices, else the fast index if one is "
        "cached and its recall@10 measured at build reaches 0.99.",
    )
    add_model_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=args_.token_id, metavar="N", help="token id (row number)")
    which.add_argument(
        "--token", type=args_.text, metavar="TEXT", help="a single token's text, or #id"
    )
    which.add_argument(
        "--text",
        type=args_.text,
        metavar="PHRASE",
        help="a phrase: the mean of its tokens' rows",
    )
    which.add_argument(
        "--expr",
        type=args_.text,
        metavar="EXPR",
        help="vector expression, e.g. 'king - man + woman' (terms: token text, "
        "#id, or a quoted phrase)",
    )
    p.add_argument(
        "-k",
        type=args_.int_range(1, MAX_K, "k"),
        default=10,
        metavar="K",
        help=f"how many neighbours (default 10, at most {MAX_K:,})",
    )
    p.add_argument("--metric", choices=METRICS, default="cosine", help="default: cosine")
    path = p.add_mutually_exclusive_group()
    path.add_argument("--exact", action="store_true", help="always scan the whole matrix")
    path.add_argument(
        "--fast", action="store_true", help="use the fast index (built first if needed)"
    )
    p.add_argument("--include-query", action="store_true", help="keep the query's own tokens")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = Model(load_model(args))
    query: int | str | Query
    if args.id is not None:
        query = args.id
    elif args.token is not None:
        query = model.token_id(args.token)  # exactly one token, unlike an expression's term
    elif args.text is not None:
        query = query_for_text(model.core, args.text)  # a phrase even if it holds + or -
    else:
        query = query_for_expression(model.core, args.expr)  # its hint is printed below
    if args.fast:
        model.searcher().build_fast_index()
    result = model.neighbors(
        query,
        k=args.k,
        metric=args.metric,
        include_query=args.include_query,
        exact=True if args.exact else (False if args.fast else None),
    )
    rows: list[dict] = []
    for n in result:
        row: dict = {"id": n.id, "piece": n.piece, "text": n.text, "score": n.score}
        if n.unused:
            row["unused"] = True
        rows.append(row)
    hint = getattr(query, "hint", None)
    if hint:
        sys.stderr.write(f"hint: {hint}\n")
    if result.skipped:
        sys.stderr.write(
            f"note: {result.skipped} rows that are all zeros or hold NaN/inf were left out\n"
        )
    if args.json:
        print_json(rows)
        return 0
    kind = result.how
    if args.fast and result.exact:
        sys.stderr.write(f"note: answered exactly: {result.note}\n")
    score_name = {"cosine": "cosine", "dot": "dot", "l2": "distance"}[args.metric]
    print(f"neighbours of {result.query}  ({args.metric}, {kind})")
    width = max([len(r["text"]) for r in rows] + [5])
    print(f"{'rank':>4}  {'token':<{width}}  {'id':>8}  {score_name:>9}")
    for rank, r in enumerate(rows, 1):
        mark = "  (unused)" if r.get("unused") else ""
        score = r["score"]  # dot products of huge rows (1e77) in scientific notation
        shown = f"{score:>9.4f}" if abs(score) < 1e6 else f"{score:>9.4e}"
        print(f"{rank:>4}  {r['text']:<{width}}  {r['id']:>8}  {shown}{mark}")
    return 0
