"""``ecc doctor``: is this machine ready to run ecc?"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import click

from ecc.cli.output import emit_json, json_option, say


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def _git() -> Check:
    git = shutil.which("git")
    if not git:
        return Check("git", False, "git is not on PATH (sessions and worktrees need it)")
    out = subprocess.run([git, "--version"], capture_output=True, text=True, check=False)
    version = out.stdout.strip().removeprefix("git version ")
    parts = version.split(".")
    try:
        modern = (int(parts[0]), int(parts[1])) >= (2, 38)
    except (ValueError, IndexError):
        modern = False
    note = "" if modern else " (merge checks need git >= 2.38)"
    return Check("git", modern, f"git {version}{note}")


def _config() -> Check:
    from ecc.contract.errors import EccError
    from ecc.runtime.config import model as config

    try:
        loaded = config.current()
    except EccError as exc:
        return Check("config", False, exc.message)
    sources = [layer.source for layer in loaded.layers] or ["defaults only"]
    return Check("config", True, "valid; layers: " + "; ".join(sources))


def _plugins() -> Check:
    from ecc.contract.errors import EccError
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import PluginSet

    try:
        plugin_set = PluginSet(view())
    except EccError as exc:
        return Check("plugins", False, exc.message)
    broken = [r for r in plugin_set.records if r.error]
    loaded = [r for r in plugin_set.records if r.loaded]
    if broken:
        names = ", ".join(f"{r.group}:{r.name} ({r.error})" for r in broken)
        return Check("plugins", False, f"{len(loaded)} loaded; broken: {names}")
    return Check("plugins", True, f"{len(loaded)} loaded")


def _state_dir() -> Check:
    from ecc.runtime import paths

    directory = paths.state_dir()
    try:
        paths.ensure_private_dir(directory)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("state dir", False, f"{directory} is not writable: {exc.strerror or exc}")
    return Check("state dir", True, str(directory))


@click.command("doctor")
@json_option
def doctor_command(as_json: bool) -> None:
    """Check git, config, plugins and the state directory; exit 1 if any check fails."""
    checks = [_git(), _config(), _plugins(), _state_dir()]
    if as_json:
        emit_json({"ok": all(c.ok for c in checks), "checks": [c.__dict__ for c in checks]})
    else:
        for check in checks:
            say(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
    if not all(c.ok for c in checks):
        raise SystemExit(1)
