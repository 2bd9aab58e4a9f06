"""`gui` (the default): start the window. Qt is imported only here, and only when run."""

from __future__ import annotations

import argparse


def register(sub) -> None:
    p = sub.add_parser("gui", help="start the window (the default)")
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="model to open (default: the last one used, else the demo)",
    )
    p.add_argument("--tensor", metavar="NAME", help="embedding tensor name (overrides detection)")
    p.add_argument(
        "--screenshot",
        metavar="FILE.png",
        help="save a PNG of the whole window once every job is done, then exit "
        "(works without a display)",
    )
    p.add_argument("--text", help="text to put in the tokenizer pane")
    p.add_argument("--select", metavar="TOKEN", help="token to select (text or #id)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from explorer.ui.launch import launch  # noqa: PLC0415 - keep Qt out of headless commands

    return launch(args)
