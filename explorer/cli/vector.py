"""`vector`: one embedding row, decoded exactly, as JSON, CSV or .npy."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from explorer.api.model import Model
from explorer.cli import args as args_
from explorer.cli.common import add_model_options, json_safe, load_model, print_json
from explorer.core.errors import ExplorerError

FORMATS = ("json", "csv", "npy")


def register(sub) -> None:
    p = sub.add_parser("vector", help="print one row of the embedding matrix")
    add_model_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", type=args_.token_id, metavar="N", help="token id (row number)")
    which.add_argument(
        "--token",
        type=args_.text,
        metavar="TEXT",
        help="token text (must be a single token) or #id",
    )
    p.add_argument("--format", choices=FORMATS, help="output format (default: from --out)")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if not args.out:
        return "json"
    suffix = Path(args.out).suffix.lstrip(".").lower()
    if suffix not in FORMATS:
        raise ExplorerError(
            f"{args.out}: cannot tell the format from the suffix; use --format json|csv|npy"
        )
    return suffix


def _csv(values: np.ndarray) -> str:
    # repr of the float64 value is exact for float32 (and float64) values
    return "index,value\n" + "".join(f"{i},{float(v)!r}\n" for i, v in enumerate(values))


def run(args: argparse.Namespace) -> int:
    model = Model(load_model(args))
    token_id = model.token_id(args.id if args.id is not None else args.token)
    values = model.row(token_id)
    fmt = _format(args)
    obj = {
        "id": token_id,
        "label": model.label(token_id),
        "dtype": model.dtype,
        "values": values.astype(float).tolist(),
    }
    if not args.out:
        if fmt == "npy":
            raise ExplorerError("--format npy needs --out FILE")
        if fmt == "csv" and args.json:
            raise ExplorerError("--json conflicts with --format csv on stdout; add --out FILE")
        if fmt == "csv":
            sys.stdout.write(_csv(values))
        else:
            print_json(obj)
        return 0
    if fmt == "npy":
        with open(args.out, "wb") as f:  # np.save(path) would append .npy to other names
            np.save(f, values)
    elif fmt == "csv":
        args_.write_text_file(args.out, _csv(values))
    else:
        args_.write_text_file(args.out, json.dumps(json_safe(obj), ensure_ascii=False) + "\n")
    return 0
