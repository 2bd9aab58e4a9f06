"""`compare-head`: the input embedding E against the output head U — per-token cosine over the
vocabulary, and for one token its neighbours in both spaces and the direct path E[t]·Uᵀ."""

from __future__ import annotations

import argparse
import sys

from explorer.cli.common import add_model_options, load_model, print_json


def register(sub) -> None:
    p = sub.add_parser(
        "compare-head",
        help="input embedding vs output head: per-token cosine, neighbours, direct path",
        description="Cosine between each token's input row E[i] and output row U[i] (a "
        "histogram and the extremes). With --token/--id: the token's neighbours in both "
        "spaces, their overlap, and the direct path E[t]·Uᵀ (E[t]·Eᵀ when the head is tied).",
    )
    add_model_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--token", metavar="TEXT", help="a single token's text, or #id")
    which.add_argument("--id", type=int, metavar="N", help="token id (row number)")
    p.add_argument("-k", type=int, default=10, metavar="K", help="list length (default 10)")
    p.set_defaults(func=run)


def _rows(title: str, rows: list[dict]) -> list[str]:
    lines = [title]
    for rank, r in enumerate(rows, 1):
        lines.append(f"  {rank:>3}  {r['text']!s:<24} {r['id']:>8}  {r['score']:>9.4f}")
    return lines


def run(args: argparse.Namespace) -> int:
    from explorer.core.analysis import head  # numpy work
    from explorer.core.tokenizer.tokens import parse_token_ref

    model = load_model(args)
    token_id = None
    if args.token is not None:
        token_id = model.check_id(parse_token_ref(args.token, model.tokenizer))
    elif args.id is not None:
        token_id = model.check_id(args.id)
    if token_id is not None and not 1 <= args.k <= 10_000:
        from explorer.core.errors import AnalysisError

        raise AnalysisError(f"-k must be from 1 to 10000, not {args.k}")
    cos_result = head.head_cosine(model)
    result = cos_result.as_dict()
    if token_id is not None:
        result.update(head.token_view(model, token_id, args.k).as_dict())
    if args.json:
        print_json(result)
        return 0
    lines = [cos_result.statement(model.path.name)]
    if not cos_result.tied:
        c = result["cosine"]
        lines.append(
            f"cosine(E[i], U[i]) over {model.rows:,} tokens: mean {c['mean']:.4f}, "
            f"median {c['median']:.4f}, min {c['min']:.4f}, max {c['max']:.4f}"
        )
        lines += _rows("lowest:", [r for r in result["extremes"] if r["end"] == "lowest"])
        lines += _rows("highest:", [r for r in result["extremes"] if r["end"] == "highest"])
    if token_id is not None:
        tok = result["token"]
        lines.append(f"token {tok['text']} (#{tok['id']}), cosine(E[t], U[t]) = {tok['score']:.4f}")
        lines += _rows("neighbours in E (cosine):", result["neighbors_input"])
        if not cos_result.tied:
            lines += _rows("neighbours in U (cosine):", result["neighbors_output"])
            lines.append(f"overlap: {result['overlap']} of {args.k}")
        what = "E[t]·Uᵀ"
        if cos_result.tied:
            what = "E[t]·Eᵀ (as if tied)" if cos_result.no_head else "E[t]·Eᵀ (tied)"
        lines += _rows(f"direct path, top logits of {what}:", result["direct_path"])
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
