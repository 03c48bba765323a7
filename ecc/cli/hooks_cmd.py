"""``ecc hooks install|uninstall``: put ``ecc hook`` into a harness's own hook configuration.

The core only chooses the scope, the project, the command that runs ecc and how long the harness
should let it run (``risk.approval_timeout`` plus a margin, so a call held for approval is
answered by ecc); the harness's adapter (``ecc_install_integration``, kind ``hooks``) knows the
file and its format.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from ecc.cli.output import json_option


@click.group("hooks")
def hooks_group() -> None:
    """Install ecc's hooks into a harness so every tool call is scored, recorded and enforced."""


def _options(function: Any) -> Any:
    function = click.option(
        "--dry-run", is_flag=True, help="Show the change as a diff; write nothing."
    )(function)
    function = click.option(
        "--user", "scope", flag_value="user", help="The harness's user-wide configuration."
    )(function)
    function = click.option(
        "--project",
        "scope",
        flag_value="project",
        default=True,
        help="The current project's configuration (the default).",
    )(function)
    function = click.option(
        "--harness", required=True, help="claude, codex, gemini, opencode, or a plugin's harness."
    )(function)
    return json_option(function)


def ecc_command(scope: str) -> str:
    """How a harness should run ecc from a file of ``scope``.

    A project's files are committed and shared with a team, so there it is plain ``ecc``, found
    on each person's PATH (an absolute path into one person's virtualenv would break for every
    other clone). The user's own files name this installation absolutely (its console script,
    else ``python -m ecc``), so the harness's PATH does not matter. Managed sessions need
    neither: they apply their own hook (:mod:`ecc.sessions.enforcement`).
    """
    if scope == "project":
        return PORTABLE_COMMAND
    from ecc.sessions.enforcement import ecc_argv

    return shlex.join(ecc_argv())


PORTABLE_COMMAND = "ecc"


def hook_timeout() -> int:
    """Seconds a harness should give ``ecc hook`` (``risk.approval_timeout`` and a margin)."""
    from ecc.runtime.config.view import view
    from ecc.sessions.enforcement import hook_timeout_secs

    return hook_timeout_secs(view())


def _path_warning(scope: str, action: str) -> str | None:
    """The warning for a project install when ``ecc`` on PATH is missing or another ecc."""
    if scope != "project" or action != "install":
        return None
    found = shutil.which(PORTABLE_COMMAND)
    if found is None:
        return (
            "Warning: `ecc` is not on PATH, so the harness will not find the hook this file runs;"
            " put ecc on PATH (e.g. `pipx install ecc-control-plane`)"
        )
    here = Path(sys.executable).parent / PORTABLE_COMMAND
    if here.exists() and Path(found).resolve() != here.resolve():
        return f"Warning: `ecc` on PATH is {found}, not this installation ({here})"
    return None


def _apply(action: str, harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    from ecc.cli.integration import apply_integration

    options = {"command": ecc_command(scope), "hook_timeout": hook_timeout()}
    apply_integration(
        "hooks", action, harness, scope, dry_run, as_json, options=options, what="hooks"
    )
    warning = _path_warning(scope, action)
    if warning and not dry_run:
        click.echo(warning, err=True)


@hooks_group.command("install")
@_options
def install_command(harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Make HARNESS run `ecc hook` before every tool call (idempotent)."""
    _apply("install", harness, scope, dry_run, as_json)


@hooks_group.command("uninstall")
@_options
def uninstall_command(harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Remove exactly what `ecc hooks install` added."""
    _apply("uninstall", harness, scope, dry_run, as_json)
