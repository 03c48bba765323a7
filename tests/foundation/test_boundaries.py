"""The core never imports a plugin: plugins reach it only through entry points and hooks."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import REPO

FORBIDDEN_PREFIXES = ("ecc_plugins", "ecc_adapter_", "adapters", "examples", "plugins")


def imported_modules(source: str) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))
    return names


def test_core_sources_never_import_plugin_packages():
    offenders = []
    files = sorted((REPO / "ecc").rglob("*.py"))
    assert len(files) > 10
    for path in files:
        for name in imported_modules(path.read_text()):
            if name.split(".")[0].startswith(FORBIDDEN_PREFIXES):
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
    assert offenders == []


def test_the_check_itself_catches_an_import():
    assert imported_modules("from ecc_plugins import shell\nimport ecc_adapter_claude\n") == [
        "ecc_plugins",
        "ecc_adapter_claude",
    ]


def test_importing_every_core_module_loads_no_plugin():
    code = (
        "import importlib, pkgutil, sys, ecc\n"
        "for m in pkgutil.walk_packages(ecc.__path__, 'ecc.'):\n"
        "    if m.name.startswith('ecc.mcp') or m.name.startswith('ecc.tui'):\n"
        "        continue\n"
        "    importlib.import_module(m.name)\n"
        "bad = [n for n in sys.modules if n.startswith(('ecc_plugins', 'ecc_adapter_'))]\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_version_does_not_import_heavy_libraries():
    code = (
        "import sys; sys.argv = ['ecc', '--version']\n"
        "from ecc.entry import main; main()\n"
        "heavy = [m for m in ('pydantic', 'stevedore', 'pluggy', 'sqlite3', 'mcp') "
        "if m in sys.modules]\n"
        "print('heavy:', ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.splitlines() == ["ecc 0.1.0", "heavy: "], result.stderr
