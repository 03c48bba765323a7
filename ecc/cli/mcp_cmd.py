"""``ecc mcp install|uninstall``: register ``ecc-memory-mcp`` in a harness's own configuration.

The core chooses the scope, the project and the command that starts the server (the console
script of this installation, absolute); the adapter (``ecc_install_integration``, kind ``mcp``)
knows the file, its format and the entry's shape, and sets ``ECC_MEMORY_HARNESS`` to its harness.
"""

from __future__ import annotations

from pathlib import Path

import click

from ecc.cli.output import emit_json, json_option, say


@click.group("mcp")
def mcp_group() -> None:
    """Register the memory vault's MCP server (ecc-memory-mcp) in a harness's configuration."""


def mcp_command() -> list[str]:
    """This installation's ``ecc-memory-mcp`` console script (absolute), else
    ``python -m ecc.mcp.server`` with this interpreter."""
    from ecc.hookconfig import mcp_argv

    return mcp_argv({})


def _options(function):  # type: ignore[no-untyped-def]
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
    from ecc import paths
    from ecc.config import get_config
    from ecc.errors import EccError
    from ecc.harnesses import canonical_name
    from ecc.plugins import get_plugin_manager
    from ecc.types import IntegrationRequest

    config = get_config()
    name = canonical_name(harness, config)
    request = IntegrationRequest(
        kind="mcp",
        action=action,
        scope=scope,
        project_dir=paths.find_project_root() or Path.cwd(),
        dry_run=dry_run,
        options={"mcp_command": mcp_command()},
    )
    result = get_plugin_manager(config).hook.ecc_install_integration(harness=name, request=request)
    if result is None:
        raise EccError(f"no installed adapter can {action} an MCP server for harness {name!r}")
    if as_json:
        emit_json(
            {
                "harness": name,
                "action": action,
                "scope": scope,
                "dry_run": dry_run,
                "server": "ecc-memory",
                "command": request.options["mcp_command"],
                "location": str(result.location) if result.location else None,
                "changed_files": [str(path) for path in result.changed_files],
                "diff": result.diff,
                "message": result.message,
            }
        )
        return
    if dry_run:
        if result.diff:
            click.echo(result.diff, nl=False)
        say(f"(dry run) {len(result.changed_files)} file(s) would change")
        return
    say(result.message)


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
