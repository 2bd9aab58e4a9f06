"""Command line: headless subcommands over the Qt-free core; `gui` (the default) starts the window.

Each subcommand lives in its own module with `register(subparsers)`, which sets `func`.
Only the module of the command being run is imported (all of them for `--help`), and each keeps
its heavy imports (numba, umap, scikit-learn, Qt) inside the command function, so that `info`,
`tokenize` and `vector` answer at about the speed of a script that reads one row. Dataclasses
loaded on those paths carry a docstring: without one, `dataclass` makes one with
`inspect.signature`, a millisecond per class.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from explorer import __version__
from explorer.cli import common
from explorer.core.errors import ExplorerError, one_line
from explorer.core.model.files import DEMO

# command name -> module under explorer.cli
COMMAND_MODULES = {
    "info": "info",
    "tokenize": "tokenize",
    "vector": "vector",
    "neighbors": "neighbors",
    "project": "project",
    "index": "index",
    "models": "models",
    "stats": "stats",
    "compare-head": "head",
    "compare": "compare",
    "quant": "quant",
    "learn": "learn",
    "gui": "gui",
}
COMMANDS = tuple(COMMAND_MODULES)
PROG = "embedding-explorer"


class OneLineParser(argparse.ArgumentParser):
    """Usage errors are one line on stderr and exit code 2, like every other bad input."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {one_line(message)} (see --help)\n")

    def _print_message(self, message: str, file=None) -> None:
        if (file or sys.stderr) is not None:  # a closed stdout/stderr must not crash --help
            super()._print_message(message, file)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with `only`, just that subcommand (imports only its module)."""
    parser = OneLineParser(
        prog=PROG, description="Look inside the token-embedding matrix of a language model."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"explorer.cli.{COMMAND_MODULES[name]}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        try:  # text output to a non-UTF-8 terminal or pipe must not crash on ␣ or 🐱
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # OSError: its descriptor is closed
            pass
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list else None
    if first is None or (first not in COMMANDS and first not in ("-h", "--help", "--version")):
        if (
            first is not None
            and not first.startswith("-")
            and not os.path.exists(first)
            and first != DEMO
        ):
            # a typo such as `infoo` should not open a window that then fails
            return common.fail(
                f"{first!r} is neither a command ({', '.join(sorted(COMMANDS))}) "
                "nor an existing model path"
            )
        args_list.insert(0, "gui")
    if sys.stdout is None:  # started with >&-
        sys.stdout = common.ClosedStream()  # type: ignore[assignment]
    parser = build_parser(args_list[0] if args_list[0] in COMMANDS else None)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # usage errors (2), --help and --version (0): a return code
        return e.code if isinstance(e.code, int) else 2
    try:
        with warnings.catch_warnings():
            # NaN/inf rows are reported in the output itself; numpy's warnings would add lines
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(args.func(args) or 0)
    except ExplorerError as e:
        return common.fail(str(e))
    except KeyboardInterrupt:
        return common.fail("interrupted", code=130)
    except BrokenPipeError:
        return 0
    except OSError as e:
        if e.errno == errno.EBADF:  # fd 1 closed after start, e.g. by a parent process
            return common.fail("standard output is closed; redirect it to a file or use --out")
        return common.fail(f"{type(e).__name__}: {e}")
    except (MemoryError, RecursionError) as e:
        return common.fail(f"{type(e).__name__}: {e}")


# Read-only commands whose work is over when main() returns: they skip the interpreter's
# tear-down (freeing numpy's and the tokenizer's objects module by module), a few tens of ms
# of a run that should cost about as much as reading one row.
QUICK_EXIT = ("info", "tokenize", "vector", "models")


def entry() -> None:
    """The `embedding-explorer` command and `python -m explorer`."""
    code = main()
    if len(sys.argv) > 1 and sys.argv[1] in QUICK_EXIT:
        try:
            if sys.stdout is not None:
                sys.stdout.flush()
        except (OSError, ValueError) as e:  # e.g. a full disk behind stdout: not a success
            code = code or common.fail(f"cannot write to standard output ({e})")
        try:
            if sys.stderr is not None:
                sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)
    raise SystemExit(code)
