"""The import rules of docs/architecture.md, checked on the source: layers point one way and no
module is part of an import cycle (imports inside functions count; ``TYPE_CHECKING`` ones do not).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ecc"

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def allowed() -> dict[str, set[str]]:
    """Each part of the package and the parts it may import, from the table of
    docs/architecture.md (its own modules and the package root are always allowed)."""
    lines = ARCHITECTURE.read_text(encoding="utf-8").splitlines()
    start = lines.index("| part | may import | why |") + 2
    table: dict[str, set[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        part, imports = (cell.strip() for cell in line.strip("|").split("|")[:2])
        table[part.strip("`")] = set(re.findall(r"`([\w.]+)`", imports))
    return table


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(module: str, path: Path) -> set[str]:
    """Every dotted name ``module`` imports at run time, anywhere in the file."""
    names: set[str] = set()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for other in child.orelse:
                    visit_one(other)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
        if not (isinstance(node, ast.If) and _type_checking(node.test)):
            visit(node)
        else:
            for other in node.orelse:
                visit_one(other)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return names


def graph() -> dict[str, set[str]]:
    """Module -> the ecc modules it imports (importing ``a.b.c`` imports ``a`` and ``a.b``)."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        targets: set[str] = set()
        for name in imported_names(module, path):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if not name:
                continue
            parts = name.split(".")
            targets.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        targets.discard(module)
        edges[module] = targets
    return edges


def part(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_part_of_the_package_has_a_rule():
    assert {part(module) for module in modules()} - {""} == set(allowed())


def test_no_import_cycle_among_ecc_modules():
    assert cycles(graph()) == []


def test_each_part_imports_only_the_parts_below_it():
    rules = allowed()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in targets
        if part(module) and part(target) not in {"", part(module), *rules[part(module)]}
    )
    assert wrong == []


@pytest.mark.parametrize(
    "source, found",
    [
        ("def f():\n    import ecc.store.sqlite\n", {"ecc.store.sqlite"}),
        (
            "if TYPE_CHECKING:\n    import ecc.store.sqlite\nelse:\n    import ecc.tui\n",
            {"ecc.tui"},
        ),
        ("from . import models\n", {"ecc.store", "ecc.store.models"}),
    ],
)
def test_the_scan_sees_imports_in_functions_and_skips_type_checking_ones(tmp_path, source, found):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert imported_names("ecc.store.sqlite", path) == found


def test_the_cycle_finder_finds_a_cycle_through_three_modules():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
