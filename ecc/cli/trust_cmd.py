"""``ecc trust``: approve a repository's ``.ecc/config.toml``, list approvals, revoke one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.contract.errors import EccError


@click.command("trust")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--list", "list_all", is_flag=True, help="List every approved project file.")
@click.option("--revoke", is_flag=True, help="Forget the approval of PATH's project file.")
@json_option
def trust_command(path: Path | None, list_all: bool, revoke: bool, as_json: bool) -> None:
    """Approve the project config of PATH (a repository or its .ecc/config.toml; default: the
    repository here), so its keys that run programs, loosen enforcement or redirect output apply.

    The approval is for the file's current content: any change to it needs `ecc trust` again.
    Prints what the approval lets apply; review the file first, as for direnv's `allow`.
    """
    if list_all:
        if path is not None or revoke:
            raise click.UsageError("--list takes no PATH and no --revoke")
        _list(as_json)
        return
    from ecc.runtime.config import trust

    target = project_file(path)
    if revoke:
        if not trust.revoke(target):
            raise EccError(f"{target} is not trusted")
        _done(as_json, {"path": str(target), "revoked": True}, f"Revoked trust in {target}")
        return
    _trust(target, as_json)


def project_file(path: Path | None) -> Path:
    """The project config file PATH names (a repository, a directory in one, or the file)."""
    from ecc.runtime import paths

    if path is None:
        found = paths.project_config_file()
        if found is None:
            raise EccError("not inside a git repository: there is no project config to trust")
        return found.resolve()
    if not path.exists():
        raise EccError(f"{path} does not exist")
    if path.is_dir():
        root = paths.find_project_root(path)
        if root is None:
            raise EccError(f"{path} is not inside a git repository")
        return (root / ".ecc" / "config.toml").resolve()
    absolute = path.absolute()
    root = absolute.parent.parent
    if (
        absolute.name != "config.toml"
        or absolute.parent.name != ".ecc"
        or not (root / ".git").exists()
    ):
        raise EccError(f"{path} is not a project config file (<repository>/.ecc/config.toml)")
    return absolute.resolve()


def _trust(target: Path, as_json: bool) -> None:
    from ecc.runtime.config import guarded, trust
    from ecc.runtime.config import model as config

    if not target.is_file():
        raise EccError(f"no project config at {target}: nothing to trust")
    raw = config.read_config_bytes(target)
    data = config.parse_toml(raw, target)
    _validate(target, data)
    enables = [
        {"key": ".".join(key), "value": value, "reason": reason.reason}
        for key, value, reason in guarded.guarded_leaves(data)
    ]
    entry = trust.record(target, raw)  # the bytes shown are the bytes approved
    config.reset()
    if as_json:
        emit_json({**entry.as_dict(), "enables": enables})
        return
    if enables:
        say(f"Trusting {target} lets these keys apply:")
        for item in enables:
            say(f"  {item['key']} = {json.dumps(item['value'])}  # {item['reason']}")
    else:
        say(f"{target} sets no key that needs trust.")
    say(f"Trusted {target} (sha256 {entry.sha256[:16]}); a change to it needs `ecc trust` again.")


def _validate(target: Path, data: dict[str, Any]) -> None:
    """Refuse to approve content the configuration would reject (the error names the key)."""
    import os

    from ecc.runtime.config import model as config
    from ecc.runtime.config import overrides

    layers = [  # the content read, trusted, in the place of the file as it is now
        layer if layer.source != str(target) else config.Layer(layer.name, layer.source, data)
        for layer in config.file_layers(target.parent.parent)
    ]
    for extra in (config.env_layer(os.environ), config.flag_layer(overrides.pairs())):
        if extra is not None:
            layers.append(extra)
    config.build(layers)


def _list(as_json: bool) -> None:
    from ecc.runtime.config import trust

    rows = []
    for entry in trust.entries():
        current = trust.file_digest(Path(entry.path))
        state = (
            "missing" if current is None else "trusted" if current == entry.sha256 else "changed"
        )
        rows.append({**entry.as_dict(), "state": state})
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("No project config is trusted.")
    for row in rows:
        say(f"{row['state']:<8} {row['sha256'][:16]}  {row['trusted_at']}  {row['path']}")


def _done(as_json: bool, payload: dict[str, Any], text: str) -> None:
    if as_json:
        emit_json(payload)
    else:
        say(text)
