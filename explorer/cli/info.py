"""`info`: what the model file holds."""

from __future__ import annotations

import argparse

from explorer.cli.common import add_model_options, load_model, print_json, used_rows


def register(sub) -> None:
    p = sub.add_parser("info", help="describe the model: embedding tensor, shape, dtype, tokenizer")
    add_model_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args)
    used_rows(model)
    info = model.info()
    if args.json:
        print_json(info)
        return 0
    tied = {True: "yes", False: "no", None: "unknown"}[model.tied]
    vocab = info["tokenizer_vocab_size"]
    plural = "s" if len(model.files) != 1 else ""
    lines = [
        f"path        {info['path']}",
        f"format      {info['format']} ({len(model.files)} file{plural}, "
        f"{info['file_size'] / 1e6:.1f} MB)",
        f"embedding   {info['tensor']}  {info['rows']} × {info['dim']}  {info['dtype']}",
        f"output head {info['output_tensor'] or '-'}  tied: {tied}",
        f"tokenizer   {'none (ids only)' if vocab is None else f'{vocab} tokens'}"
        + (f", {info['unused_rows']} unused rows" if info["unused_rows"] else ""),
    ]
    print("\n".join(lines))
    return 0
