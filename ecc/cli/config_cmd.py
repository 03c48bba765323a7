"""``ecc config``: the effective configuration, where each value came from, and edits."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ecc.runtime.config.model import LoadedConfig


def _flatten(node: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(node, dict) and node:
        rows: list[tuple[str, object]] = []
        for key, value in node.items():
            rows.extend(_flatten(value, f"{prefix}.{key}" if prefix else key))
        return rows
    return [(prefix, node)]


@click.group("config")
def config_group() -> None:
    """Show, get and set configuration (defaults < user < project < ECC_CONFIG < env < -c).

    A repository's own .ecc/config.toml applies its keys that run programs, loosen enforcement
    or redirect output only after `ecc trust`; `config show --origin` lists what it left out.
    """


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
            payload["ignored"] = [item.as_dict() for item in loaded.ignored]
        emit_json(payload)
        return
    if origin:
        for key, value in _flatten(data):
            say(f"{key} = {value!r}  # {loaded.origin_of(key)}")
        for item in loaded.ignored:
            say(f"# ignored {item.key} from untrusted {item.source}: {item.reason}")
        if loaded.ignored:
            say("# review that file, then `ecc trust` applies it (a change needs trust again)")
        return
    _warn_ignored(loaded)
    say(tomli_w.dumps(data).rstrip("\n"))


def _warn_ignored(loaded: LoadedConfig) -> None:
    """One line on stderr when an untrusted project file had keys that were not applied."""
    from ecc.runtime.config import trust

    if loaded.ignored:
        keys = [item.key for item in loaded.ignored]
        say(trust.notice(loaded.ignored[0].source, keys), err=True)


@config_group.command("get")
@click.argument("key")
@json_option
def get(key: str, as_json: bool) -> None:
    """Print the effective value of KEY (dotted, e.g. risk.block)."""
    from ecc.runtime.config import model as config

    _warn_ignored(config.current())
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
@json_option
def set_(key: str, value: str, scope: str | None, as_json: bool) -> None:
    """Set KEY to VALUE (parsed as TOML, else a string) in one layer, keeping its other keys."""
    from ecc.runtime.config import model as config

    if scope is None:
        raise click.UsageError("say which file to write: --user or --project")
    path = config.set_value(key, value, scope)  # type: ignore[arg-type]
    ignored = []
    if scope == "project":
        ignored = [item for item in config.current().ignored if item.key == key]
    if as_json:
        emit_json(
            {
                "key": key,
                "value": config.parse_value(value),
                "scope": scope,
                "path": str(path),
                "applies": not ignored,
            }
        )
    else:
        say(f"Set {key} in {path}")
    if ignored:
        say(f"Note: {key} {ignored[0].reason}: it applies after `ecc trust`", err=True)


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
