"""A contract type for import-linter (pyproject.toml [tool.importlinter]): which modules of an
outside package, such as PySide6.QtWidgets, a part of explorer may reach. import-linter's own
`forbidden` type names outside packages only whole (PySide6, not PySide6.QtWidgets)."""

from __future__ import annotations

import re

from importlinter import Contract, ContractCheck, fields, output

FROM = re.compile(r"\s*from\s+([\w.]+)\s+import\s+\(?([^)#]*)")
IMPORT = re.compile(r"\s*import\s+([^#]*)")


def imported_names(line: str) -> list[str]:
    """The modules an import line may name: `from a.b import c, d` → a.b, a.b.c, a.b.d."""
    if m := FROM.match(line):
        base = m.group(1)
        names = [n.split(" as ")[0].strip() for n in m.group(2).split(",")]
        return [base] + [f"{base}.{n}" for n in names if n]
    if m := IMPORT.match(line):
        return [n.split(" as ")[0].strip() for n in m.group(1).split(",") if n.strip()]
    return []


def within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


class OutsideModulesContract(Contract):
    """The source modules, and every module of ours that they import directly or not, have no
    import line that names one of `forbidden_modules` or a module inside it."""

    source_modules = fields.ListField(subfield=fields.ModuleField())
    forbidden_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        forbidden = list(self.forbidden_modules)  # type: ignore[call-overload]
        tops = {f.split(".")[0] for f in forbidden}
        ours: set[str] = set()
        for source in self.source_modules:  # type: ignore[attr-defined]
            root = source.name.split(".")[0]
            reached = {source.name} | graph.find_descendants(source.name)
            reached |= graph.find_upstream_modules(source.name, as_package=True)
            ours |= {m for m in reached if m.split(".")[0] == root}
        found = []
        for importer in sorted(ours):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if imported.split(".")[0] not in tops:
                    continue
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    line = detail["line_contents"]
                    names = imported_names(line)
                    # `from PySide6 import (` on its own line: which modules follow is not known
                    vague = len(names) == 1 and any(within(f, names[0]) for f in forbidden)
                    if vague or any(within(n, f) for n in names for f in forbidden):
                        found.append(f"{importer}:{detail['line_number']}: {line}")
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["found"]:
            output.print_error(line, bold=False)
        output.new_line()
