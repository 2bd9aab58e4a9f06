"""`compare`: one token's exact cosine neighbours in two models, aligned by token bytes."""

from __future__ import annotations

import argparse
import sys

from explorer.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="a token's neighbours in two models side by side, with their overlap",
        description="Aligns the two vocabularies by decoded token bytes, then lists the exact "
        "cosine neighbours (query excluded) of the token in each model and how many they share.",
    )
    p.add_argument(
        "-m",
        "--model",
        action="append",
        metavar="PATH",
        required=True,
        help="a model (give -m twice: A then B): a path, or `demo` for the built-in demo",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--token", metavar="TEXT", help="a token's text in A, or #id")
    which.add_argument("--id", type=int, metavar="N", help="a token id in A (mapped to B by bytes)")
    p.add_argument("-k", type=int, default=10, metavar="K", help="neighbours (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from explorer.core.compare.neighbors import align_vocabularies, compare_neighbors
    from explorer.core.errors import ExplorerError
    from explorer.core.model.open import open_model
    from explorer.core.tokenizer.tokens import parse_token_ref

    if len(args.model) != 2:
        raise ExplorerError(f"compare needs exactly two models (-m A -m B), got {len(args.model)}")
    a, b = (open_model(path) for path in args.model)
    a_id = args.id if args.id is not None else parse_token_ref(args.token, a.tokenizer)
    result = compare_neighbors(a, b, a.check_id(a_id), args.k, align_vocabularies(a, b))
    if args.json:
        print_json(result.as_dict())
        return 0
    print(
        f"{a.label(result.a_id)}: #{result.a_id} in A ({a.path.name}), #{result.b_id} in B "
        f"({b.path.name}); {result.shared_vocab:,} tokens shared"
    )
    width = max([len(r.text) for r in result.a + result.b] + [6]) + 2
    print(f"{'rank':>4}  {'A':<{width}}{'cosine':>8}    {'B':<{width}}{'cosine':>8}")
    for n in range(max(len(result.a), len(result.b))):
        cells = []
        for rows in (result.a, result.b):
            if n < len(rows):
                r = rows[n]
                mark = "*" if r.shared else " "
                cells.append(f"{mark}{r.text:<{width - 1}}{r.score:>8.4f}")
            else:
                cells.append(" " * (width + 8))
        print(f"{n + 1:>4}  {cells[0]}    {cells[1]}")
    print(f"overlap {result.overlap} of {args.k} (* = in both lists), jaccard {result.jaccard:.3f}")
    sys.stdout.flush()
    return 0
