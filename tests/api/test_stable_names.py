"""The public names, fields and signatures are the ones docs/python.md lists.

The page is the record: a name that disappears, a new public method, a field or a signature
that changes fails here until docs/python.md says so too.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import explorer

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text(encoding="utf-8")
CLASSES = [
    *("Model", "Tokens", "Token", "Neighbors", "Neighbor"),
    *("Map", "Stats", "Head", "Comparison"),
]


def _section(title: str) -> str:
    return PAGE.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _documented_signatures() -> dict[str, str]:
    """'Model.neighbors' -> '(query, k=10, …)' from the page's list of signatures."""
    found = re.findall(r"^- `((?:explorer|\w+)\.\w+)(\(.*\))`$", _section("Stable names"), re.M)
    return dict(found)


def _plain(fn) -> str:
    """The signature without annotations and without `self`, as the page writes it."""
    params = [
        p.replace(annotation=inspect.Parameter.empty)
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]
    return str(inspect.Signature(params))


def _public_methods(cls) -> set[str]:
    return {
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_all_names_resolve_and_are_documented():
    assert sorted(explorer.__all__) == sorted(
        {*CLASSES, "open", "JobContext", "Cancelled", "ExplorerError", "__version__"}
    )
    for name in explorer.__all__:
        assert getattr(explorer, name) is not None
        if name != "__version__":
            listed = _section("Stable names") + _section("Results")
            assert f"`{name}`" in listed, name


def test_signatures_match_the_page():
    documented = _documented_signatures()
    actual = {"explorer.open": _plain(explorer.open)}
    for cls_name in CLASSES:
        cls = getattr(explorer, cls_name)
        for method in _public_methods(cls):
            actual[f"{cls_name}.{method}"] = _plain(getattr(cls, method))
    assert documented == actual


def test_fields_and_properties_match_the_page():
    results = _section("Results")
    for cls_name in CLASSES:
        cls = getattr(explorer, cls_name)
        line = re.search(rf"^- `{cls_name}`[^\n]*(?:\n  [^\n]*)*", results, re.M)
        assert line is not None, f"{cls_name} is not listed under Results"
        listed = set(re.findall(r"`(\w+)`", line.group(0))) - {cls_name}
        if dataclasses.is_dataclass(cls):
            names = {f.name for f in dataclasses.fields(cls)}
        else:
            names = {n for n, v in vars(cls).items() if isinstance(v, property)}
            if cls is explorer.Model:
                names |= {"E", "core"}  # set in __init__
        assert names <= listed, f"{cls_name}: not on the page: {sorted(names - listed)}"


def test_the_check_sees_a_changed_signature():
    """Guard: a parameter renamed in the code would not match the page's line."""

    def neighbors(self, question, k=10):
        return self, question, k

    assert _plain(neighbors) != _documented_signatures()["Model.neighbors"]
    assert _plain(explorer.Model.neighbors) == _documented_signatures()["Model.neighbors"]
