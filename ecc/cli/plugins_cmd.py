"""``ecc plugins``: what is installed, from which distribution, and what failed to load."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say


@click.command("plugins")
@json_option
def plugins_command(as_json: bool) -> None:
    """List every plugin entry point: group, distribution, hooks, and load errors."""
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
