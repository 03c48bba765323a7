"""``ecc plugins``: what is installed, from which distribution, and what failed to load;
``ecc plugins new adapter NAME`` starts a third-party adapter package."""

from __future__ import annotations

from pathlib import Path

import click

from ecc.cli.output import emit_json, json_option, say


@click.group("plugins", invoke_without_command=True)
@json_option
@click.pass_context
def plugins_command(ctx: click.Context, as_json: bool) -> None:
    """List every plugin entry point: group, distribution, hooks, and load errors."""
    if ctx.invoked_subcommand is not None:
        return
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import PluginSet

    plugin_set = PluginSet(view(), load_all=True)
    plugin_set.add_distribution_info()
    records = sorted(plugin_set.records, key=lambda r: (r.group, r.name))
    if as_json:
        emit_json([record.as_dict() for record in records])
        return
    if not records:
        say("No plugins loaded.")
        return
    for record in records:
        dist = f"{record.distribution} {record.version}" if record.distribution else "?"
        status = "error" if record.error else ("enabled" if record.enabled else "disabled")
        say(f"{record.group:<20} {record.name:<12} {status:<9} {dist}")
        if record.hooks:
            say(f"{'':<20} hooks: {', '.join(record.hooks)}")
        if record.error:
            say(f"{'':<20} error: {record.error}")


@plugins_command.group("new")
def new_group() -> None:
    """Start a new plugin package from a template."""


@new_group.command("adapter")
@click.argument("name")
@click.option(
    "--directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write it (default: ./ecc-adapter-NAME).",
)
@click.option("--program", metavar="COMMAND", help="The agent CLI it runs (default: NAME).")
@json_option
def new_adapter_command(
    name: str, directory: Path | None, program: str | None, as_json: bool
) -> None:
    """Write a working harness adapter package for NAME, with tests that pass as written."""
    from ecc.cli.plugin_template import write_adapter

    target = write_adapter(name, directory, program)
    if as_json:
        emit_json({"name": name, "directory": str(target)})
        return
    say(f"Wrote {target}")
    say(f"Next: cd {target} && python -m pytest && ecc install -e .")
