"""``ecc install`` / ``ecc uninstall``: plugins into the environment ecc itself runs from.

ecc is usually installed with pipx or ``uv tool``, each in a virtual environment of its own; a
plugin must land in that same environment to be found through its entry points. Both commands
run ``sys.executable -m pip`` there, so the user never has to find the environment.
"""

from __future__ import annotations

import re
import subprocess
import sys

import click

from ecc.contract.errors import EccError

CORE = "ecc-control-plane"


def canonical(requirement: str) -> str:
    """A requirement's project name, normalised as PyPI compares names (PEP 503)."""
    name = re.split(r"[\[<>=!~;@ ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def pip(*args: str) -> None:
    """Run pip in ecc's own environment; its exit status becomes ecc's."""
    import importlib.util

    if importlib.util.find_spec("pip") is None:
        raise EccError(
            f"ecc's environment ({sys.prefix}) has no pip; with uv, reinstall with the plugin: "
            f"uv tool install {CORE} --with NAME"
        )
    status = subprocess.run([sys.executable, "-m", "pip", *args]).returncode
    if status:
        raise SystemExit(status)


@click.command("install")
@click.argument("packages", nargs=-1)
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade the packages to their newest version.")
@click.option("-e", "--editable", metavar="PATH", help="Install a local project in editable mode.")
@click.option("--force-reinstall", is_flag=True, help="Reinstall even if already installed.")
@click.option("--pre", is_flag=True, help="Allow pre-release versions.")
def install_command(
    packages: tuple[str, ...], upgrade: bool, editable: str | None, force_reinstall: bool, pre: bool
) -> None:
    """Install plugins (PyPI names, paths or wheels) into ecc's own environment with pip.

    Example: ecc install ecc-adapter-claude 'ecc-control-plane[tui]'
    """
    if not packages and not editable:
        raise click.UsageError("name at least one package (or -e PATH)")
    args = ["install"]
    args += ["--upgrade"] if upgrade else []
    args += ["--force-reinstall"] if force_reinstall else []
    args += ["--pre"] if pre else []
    args += ["--editable", editable] if editable else []
    pip(*args, *packages)


@click.command("uninstall")
@click.argument("packages", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
def uninstall_command(packages: tuple[str, ...], yes: bool) -> None:
    """Uninstall plugins from ecc's own environment with pip (never ecc itself)."""
    if any(canonical(package) in {CORE, "ecc"} for package in packages):
        raise EccError(
            f"ecc uninstall removes plugins, not ecc itself ({CORE}): use the tool that "
            "installed it (pipx uninstall, uv tool uninstall or pip)"
        )
    pip("uninstall", *(["--yes"] if yes else []), *packages)
