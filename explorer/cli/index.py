"""`index`: build (or load) the fast neighbour index and print its measured recall."""

from __future__ import annotations

import argparse
import sys

from explorer.cli.common import Progress, add_model_options, load_model, print_json


def register(sub) -> None:
    p = sub.add_parser(
        "index",
        help="build or load the fast neighbour index; print its measured recall@10",
        description="Build the fast neighbour index of a model (or load the cached one) and "
        "print its build time, size and recall@10 against exact search, measured at build on "
        "random rows for each metric. Progress goes to stderr.",
    )
    add_model_options(p)
    p.add_argument("--rebuild", action="store_true", help="build again even if one is cached")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from explorer.core.search.neighbors import NeighborSearcher  # compiles kernels

    model = load_model(args, tokenizer=False)
    searcher = NeighborSearcher(model)
    progress = Progress("building the neighbour index", lines=True)
    searcher.build_fast_index(progress, rebuild=args.rebuild)
    progress.end()
    if searcher.cache_note:
        print(f"note: {searcher.cache_note}", file=sys.stderr)
    index = searcher.index
    assert index is not None
    stats = index.stats
    info = {
        "model": str(model.path),
        "rows": model.rows,
        "dim": model.dim,
        "recall_at_10": stats.recall_at_10,
        "queries": stats.queries,
        "usable": stats.usable,
        "reason": stats.reason or None,
        "settings": stats.settings,
        "build_seconds": stats.build_seconds,
        "size_bytes": stats.size_bytes,
        "bits": stats.bits,
        "default_path": {m: searcher.default_path(m) for m in ("cosine", "dot", "l2")},
    }
    if args.json:
        print_json(info)
        return 0
    print(f"index of {model.path}  ({model.rows} × {model.dim})")
    print(
        f"built in {stats.build_seconds:.1f} s, {stats.size_bytes / 1e6:.1f} MB, {stats.bits} bits"
    )
    for metric, recall in stats.recall_at_10.items():
        used = "usable" if stats.usable.get(metric) else "NOT usable"
        c1, c2 = stats.settings[metric]
        print(
            f"{metric:<7} recall@10 {recall:.3f} on {stats.queries} random rows ({used}; "
            f"candidates {c1} → {c2}); default path: {searcher.default_path(metric)}"
        )
    if stats.reason:
        print(f"why: {stats.reason}")
    return 0
