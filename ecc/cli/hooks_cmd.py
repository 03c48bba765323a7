"""``ecc hooks install|uninstall``: put ``ecc hook`` into a harness's own hook configuration.

The core only chooses the scope, the project, the command that runs ecc and how long the harness
should let it run (``risk.approval_timeout`` plus a margin, so a call held for approval is
answered by ecc); the harness's adapter (``ecc_install_integration``, kind ``hooks``) knows the
file and its format.
"""

from __future__ import annotations

import os
import shlex
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


def ecc_command() -> str:
    """How a harness should run ecc: this installation's console script when it sits next to the
    interpreter (it starts faster than ``python -m ecc``), else ``python -m ecc``; both absolute,
    so the harness's PATH does not matter."""
    script = Path(sys.executable).parent / "ecc"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.join([str(script)])
    return shlex.join([sys.executable, "-m", "ecc"])


def hook_timeout() -> int:
    """Seconds a harness should give ``ecc hook``: a call held for approval waits up to
    ``risk.approval_timeout``, and ecc, not the harness's own timeout, must answer it."""
    import math

    from ecc.runtime.config.view import view

    return math.ceil(float(view().risk.get("approval_timeout") or 600)) + HOOK_TIMEOUT_MARGIN


HOOK_TIMEOUT_MARGIN = 30  # seconds past the approval timeout: scoring, recording, answering


def _apply(action: str, harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    from ecc.cli.integration import apply_integration

    options = {"command": ecc_command(), "hook_timeout": hook_timeout()}
    apply_integration(
        "hooks", action, harness, scope, dry_run, as_json, options=options, what="hooks"
    )


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
