"""``ecc mcp install|uninstall``: register ``ecc-memory-mcp`` in a harness's own configuration.

The core chooses the scope, the project and the command that starts the server (the console
script of this installation, absolute); the adapter (``ecc_install_integration``, kind ``mcp``)
knows the file, its format and the entry's shape, and sets ``ECC_MEMORY_HARNESS`` to its harness.
"""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import json_option


@click.group("mcp")
def mcp_group() -> None:
    """Register the memory vault's MCP server (ecc-memory-mcp) in a harness's configuration."""


def mcp_command() -> list[str]:
    """This installation's ``ecc-memory-mcp`` console script (absolute), else
    ``python -m ecc.mcp.server`` with this interpreter."""
    from ecc.portability.harnessfiles import mcp_argv

    return mcp_argv({})


def _options(function: Any) -> Any:
    function = click.option(
        "--dry-run", is_flag=True, help="Show the change as a diff; write nothing."
    )(function)
    function = click.option(
        "--scope",
        type=click.Choice(["project", "user"]),
        default="project",
        show_default=True,
        help="The project's configuration file, or the harness's user-wide one.",
    )(function)
    function = click.option(
        "--harness", required=True, help="claude, codex, gemini, opencode, or a plugin's harness."
    )(function)
    return json_option(function)


def _apply(action: str, harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    from ecc.cli.integration import apply_integration

    command = mcp_command()
    apply_integration(
        "mcp", action, harness, scope, dry_run, as_json,
        options={"mcp_command": command}, what="an MCP server",
        extra_json=lambda result: {
            "server": "ecc-memory",
            "command": command,
            "location": str(result.location) if result.location else None,
        },
    )  # fmt: skip


@mcp_group.command("install")
@_options
def install_command(harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Add the ecc-memory server (ECC_MEMORY_HARNESS=HARNESS) to HARNESS's config (idempotent)."""
    _apply("install", harness, scope, dry_run, as_json)


@mcp_group.command("uninstall")
@_options
def uninstall_command(harness: str, scope: str, dry_run: bool, as_json: bool) -> None:
    """Remove the ecc-memory server entry, leaving every other setting as it was."""
    _apply("uninstall", harness, scope, dry_run, as_json)
