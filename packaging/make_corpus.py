"""Regenerate resources/corpus/: English prose from the documentation that CPython ships.

Every Python install carries the Language Reference's topics as plain text (`pydoc_data.topics`,
used by `help("if")`) and the docstrings of its standard library, all under the PSF License
Agreement (see resources/corpus/LICENSE). This script keeps the prose paragraphs and drops code
blocks, grammar rules and headings, so that a small embedding trained on it learns words, not
syntax. Run: python packaging/make_corpus.py
"""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import sys
import sysconfig
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "resources" / "corpus"
MAX_CHARS = 1_500_000  # the corpus stays well under 2 MB
SKIP = ("test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages", "ensurepip")


def prose(text: str) -> list[str]:
    """Paragraphs of flowing text: no indented blocks, no headings, no grammar or prompts."""
    keep = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if not lines or any(ln.startswith((" ", "\t")) for ln in lines):
            continue  # code examples, grammar productions, tables, indented notes
        if all(set(ln) <= set("*=-~^ ") for ln in lines[1:]) or len(lines) == 1:
            continue  # a heading with its underline, or a one-line fragment
        para = " ".join(ln.strip() for ln in lines)
        if ">>>" in para or "::=" in para or len(para.split()) < 8:
            continue
        keep.append(para)
    return keep


def docstrings(stdlib: Path):
    """Module, class and function docstrings of the standard library, in a fixed order."""
    for path in sorted(stdlib.rglob("*.py")):
        if any(part in SKIP for part in path.relative_to(stdlib).parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield inspect.cleandoc(doc)


def main() -> int:
    from pydoc_data.topics import topics

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paragraphs: list[str] = []
    seen: set[str] = set()
    size = 0
    sources = [topics[key] for key in sorted(topics)]
    for text in [*sources, *docstrings(stdlib)]:
        for para in prose(text):
            if para not in seen and size + len(para) + 2 <= MAX_CHARS:
                seen.add(para)
                paragraphs.append(para)
                size += len(para) + 2
    OUT.mkdir(parents=True, exist_ok=True)
    text = "\n\n".join(paragraphs) + "\n"
    (OUT / "python-docs.txt").write_text(text, encoding="utf-8")
    licence = stdlib / "LICENSE.txt"
    shutil.copyfile(licence, OUT / "LICENSE")
    version = ".".join(map(str, sys.version_info[:3]))
    print(
        f"{len(paragraphs)} paragraphs, {len(text.split())} words, {len(text):,} characters "
        f"(Python {version})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
