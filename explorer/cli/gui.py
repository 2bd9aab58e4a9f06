"""`gui` (the default): start the window. Qt is imported only here, and only when run."""

from __future__ import annotations

import argparse
import os
import sys

from explorer.cli import args as args_
from explorer.cli.common import add_reading_options, fail

MAP_STAGES = ("running", "done")  # a map while UMAP runs (preview shown), or finished
# the window's centre tabs, then the Embedding tab's own (explorer/ui/window/screenshot.py)
CENTRE_TABS = ("embedding", "map", "learn", "explain", "head", "statistics", "compare")
VIEWER_TABS = ("overview", "values", "cosine")
TABS = CENTRE_TABS + VIEWER_TABS

NO_DISPLAY = (
    "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set); "
    "run with QT_QPA_PLATFORM=offscreen, or save a picture of the window with "
    "`embedding-explorer gui --screenshot FILE.png`"
)


def register(sub) -> None:
    p = sub.add_parser("gui", help="start the window (the default)")
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="model to open (default: the last one used, else the demo)",
    )
    add_reading_options(p)
    p.add_argument(
        "--screenshot",
        metavar="FILE.png",
        help="save a PNG of the whole window once every job is done, then exit "
        "(works without a display)",
    )
    p.add_argument(
        "--size",
        metavar="WxH",
        type=args_.pixel_size,
        help="window size for --screenshot (default 1280x800)",
    )
    p.add_argument(
        "--tab",
        metavar="NAME",
        help="tab for --screenshot: embedding, map, learn, explain, head, statistics, compare, "
        "or the Embedding tab's overview, values (values and bits), cosine (two or more "
        "--select)",
    )
    p.add_argument(
        "--map",
        choices=MAP_STAGES,
        help="for --screenshot: press Map (around --select) and save the window while UMAP "
        "runs or once the map is done",
    )
    p.add_argument("--text", help="text to put in the tokenizer pane")
    p.add_argument(
        "--select",
        metavar="TOKEN",
        action="append",
        help="token to select (text or #id); give it again to select several",
    )
    p.add_argument(
        "--session",
        metavar="FILE",
        help="open a saved session (File › Save session): its model, text, selection, "
        "map settings and slides",
    )
    p.set_defaults(func=run)


def has_display() -> bool:
    """False on Linux without X11/Wayland and without a chosen Qt platform: Qt would abort."""
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run(args: argparse.Namespace) -> int:
    if not args.screenshot and (args.size or args.tab or args.map):
        return fail("--size, --tab and --map go with --screenshot FILE.png")
    tab = (args.tab or "").lower()
    if args.tab and tab not in TABS:
        return fail(f"--tab {args.tab!r}: no such tab (one of: {', '.join(TABS)})")
    if tab == "cosine" and len(args.select or []) < 2:
        return fail("--tab cosine compares rows: select two or more (--select A --select B)")
    if not args.screenshot and not has_display():  # a screenshot goes offscreen by itself
        return fail(NO_DISPLAY)
    from explorer.ui.window.launch import launch  # keep Qt out of headless commands

    code = launch(args)
    if args.screenshot:
        return code
    # The window is closed, its settings saved and its jobs cancelled. Skip the interpreter's
    # clean-up: collecting numba's, scikit-learn's and the vocabulary's objects and running
    # Qt's destructors took 2–5 s after the window had gone, for nothing the OS won't do.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
