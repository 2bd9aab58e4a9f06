"""`info`: what the model file holds."""

from __future__ import annotations

import argparse

from explorer.cli.common import add_model_options, load_model, print_json, used_rows
from explorer.core.units import human_size, short_source


def register(sub) -> None:
    p = sub.add_parser("info", help="describe the model: embedding tensor, shape, dtype, tokenizer")
    add_model_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args, warn=False)  # the warnings are part of what info prints
    used_rows(model)
    model.check_head()  # every row of a stored head, not only the sampled ones
    if model.tokenizer_match is None:  # -t checked it already
        model.check_tokenizer()
    info = model.info()
    if args.json:
        print_json(info)
        return 0
    tied = {True: "yes", False: "no", None: "no head"}[model.tied]
    vocab = info["tokenizer_vocab_size"]
    plural = "s" if len(model.files) != 1 else ""
    tok = "none (ids only)" if vocab is None else f"{vocab} tokens"
    if vocab is not None:
        tok += f" from {short_source(info['tokenizer_source'])}"
    lines = [
        f"path        {info['path']}",
        f"format      {info['format']} ({len(model.files)} file{plural}, "
        f"{human_size(info['file_size'])})",
        f"embedding   {info['tensor']}  {info['rows']} × {info['dim']}  {info['dtype']}",
        f"output head {info['output_tensor'] or '-'}  tied: {tied}  ({info['head']})",
        f"tokenizer   {tok}"
        + (f", {info['unused_rows']} unused rows" if info["unused_rows"] else ""),
        *([f"            {model.tokenizer_match.sentence}"] if model.tokenizer_match else []),
        *(f"warning     {w}" for w in info["warnings"]),
    ]
    print("\n".join(lines))
    return 0
