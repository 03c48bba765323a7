"""``ecc config``: the effective configuration, where each value came from, and edits."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say


def _flatten(node: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(node, dict) and node:
        rows: list[tuple[str, object]] = []
        for key, value in node.items():
            rows.extend(_flatten(value, f"{prefix}.{key}" if prefix else key))
        return rows
    return [(prefix, node)]


@click.group("config")
def config_group() -> None:
    """Show, get and set configuration (defaults < user < project < ECC_CONFIG < env < -c)."""


@config_group.command("show")
@json_option
@click.option("--origin", is_flag=True, help="Show which layer each value came from.")
def show(as_json: bool, origin: bool) -> None:
    """Print the effective configuration."""
    import tomli_w

    from ecc.runtime.config import model as config

    loaded = config.current()
    data = loaded.config.model_dump(mode="json", exclude_none=not as_json)
    if as_json:
        payload: dict[str, object] = {"config": data}
        if origin:
            payload["origins"] = {key: loaded.origin_of(key) for key, _ in _flatten(data)}
        emit_json(payload)
        return
    if origin:
        for key, value in _flatten(data):
            say(f"{key} = {value!r}  # {loaded.origin_of(key)}")
        return
    say(tomli_w.dumps(data).rstrip("\n"))


@config_group.command("get")
@click.argument("key")
@json_option
def get(key: str, as_json: bool) -> None:
    """Print the effective value of KEY (dotted, e.g. risk.block)."""
    from ecc.runtime.config import model as config

    value = config.lookup(config.get_config(), key)
    if as_json or isinstance(value, dict | list):
        emit_json(value)
    elif isinstance(value, bool):
        say("true" if value else "false")
    else:
        say("" if value is None else value)


@config_group.command("set")
@click.argument("key")
@click.argument("value")
@click.option("--user", "scope", flag_value="user", help="Write the user config file.")
@click.option("--project", "scope", flag_value="project", help="Write <repo>/.ecc/config.toml.")
def set_(key: str, value: str, scope: str | None) -> None:
    """Set KEY to VALUE (parsed as TOML, else a string) in one layer, keeping its other keys."""
    from ecc.runtime.config import model as config

    if scope is None:
        raise click.UsageError("say which file to write: --user or --project")
    path = config.set_value(key, value, scope)  # type: ignore[arg-type]
    say(f"Set {key} in {path}")


@config_group.command("path")
@json_option
def path(as_json: bool) -> None:
    """Print the config files ecc reads, in layer order, and whether each exists."""
    import os

    from ecc.runtime import paths

    rows = [("user", paths.user_config_file()), ("project", paths.project_config_file())]
    if os.environ.get("ECC_CONFIG"):
        from pathlib import Path

        rows.append(("ECC_CONFIG", Path(os.environ["ECC_CONFIG"])))
    if as_json:
        emit_json(
            [
                {"layer": layer, "path": str(p) if p else None, "exists": bool(p and p.is_file())}
                for layer, p in rows
            ]
        )
        return
    for layer, p in rows:
        state = "exists" if p and p.is_file() else "absent"
        say(f"{layer}: {p if p else '(not in a git repository)'} ({state})")
