"""`models`: the models already on this computer (Hugging Face cache, Ollama, LM Studio)."""

from __future__ import annotations

import argparse

from explorer.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser(
        "models",
        help="list models on this computer (Hugging Face cache, Ollama, LM Studio)",
        description="Lists models found in the Hugging Face cache (HF_HUB_CACHE, HF_HOME), "
        "Ollama (~/.ollama/models, OLLAMA_MODELS) and LM Studio; headers only. "
        "Open one with -m NAME.",
    )
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from explorer.core.model.stores import list_models
    from explorer.core.units import human_size

    found = list_models()
    if args.json:
        print_json([m.as_dict() for m in found])
        return 0
    if not found:
        print("no models found in the Hugging Face cache, Ollama or LM Studio")
        return 0
    width = max(len(m.name) for m in found)
    for m in found:
        if m.problem:
            print(f"{m.name:<{width}}  {m.store:<11}  cannot read: {m.problem}")
            continue
        shape = f"{m.rows} × {m.dim}"
        print(
            f"{m.name:<{width}}  {m.store:<11}  {m.format:<19}  {shape:>14}  {m.dtype:<6}"
            f"  {human_size(m.size):>8}"
        )
    return 0
