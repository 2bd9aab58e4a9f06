"""`vector`: one embedding row, decoded exactly, as JSON, CSV or .npy."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from explorer.cli.common import add_model_options, load_model, print_json
from explorer.core.errors import ExplorerError
from explorer.core.tokens import parse_token_ref


def register(sub) -> None:
    p = sub.add_parser("vector", help="print one row of the embedding matrix")
    add_model_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=int, metavar="N", help="token id (row number)")
    which.add_argument("--token", metavar="TEXT", help="token text (must be a single token) or #id")
    p.add_argument("--format", choices=["json", "csv", "npy"], help="output format (default from --out)")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args)
    token_id = args.id if args.id is not None else parse_token_ref(args.token, model.tokenizer)
    values = model.vector(model.check_id(token_id))
    fmt = args.format or ("json" if args.json or not args.out else Path(args.out).suffix.lstrip(".").lower())
    if fmt not in ("json", "csv", "npy"):
        raise ExplorerError(f"{args.out}: cannot tell the format from the suffix; use --format json|csv|npy")
    if fmt == "npy":
        if not args.out:
            raise ExplorerError("--format npy needs --out FILE")
        np.save(args.out, values)
        return 0
    if fmt == "csv":
        text = "index,value\n" + "".join(f"{i},{float(v)!r}\n" for i, v in enumerate(values))
        if args.out:
            Path(args.out).write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    obj = {"id": token_id, "label": model.label(token_id), "dtype": model.dtype,
           "values": [float(v) for v in values]}
    if args.out:
        import json

        from explorer.cli.common import json_safe

        Path(args.out).write_text(json.dumps(json_safe(obj)) + "\n")
    else:
        print_json(obj)
    return 0
