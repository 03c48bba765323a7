"""``ecc doctor``: is this machine ready to run ecc?"""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import click

from ecc.cli.doctor_checks import Check
from ecc.cli.output import emit_json, json_option, say


def _git() -> Check:
    git = shutil.which("git")
    if not git:
        return Check(
            "git", False, "git is not on PATH (sessions and worktrees need it)", "fail",
            "install git (2.38 or later) and put it on PATH",
        )  # fmt: skip
    out = subprocess.run([git, "--version"], capture_output=True, text=True, check=False)
    version = out.stdout.strip().removeprefix("git version ")
    parts = version.split(".")
    try:
        modern = (int(parts[0]), int(parts[1])) >= (2, 38)
    except (ValueError, IndexError):
        modern = False
    note = "" if modern else " (merge checks need git >= 2.38)"
    if modern:
        return Check("git", True, f"git {version}")
    return Check("git", False, f"git {version}{note}", "fail", "install git 2.38 or later")


def _config() -> Check:
    from ecc.contract.errors import EccError
    from ecc.runtime.config import model as config

    try:
        loaded = config.current()
    except EccError as exc:
        return Check(
            "config", False, exc.message, "fail", "edit the file named above (ecc config path)"
        )
    sources = [layer.source for layer in loaded.layers] or ["defaults only"]
    return Check("config", True, "valid; layers: " + "; ".join(sources))


def _plugins() -> Check:
    from ecc.contract.errors import EccError
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import PluginSet

    try:
        plugin_set = PluginSet(view())
    except EccError as exc:
        return Check("plugins", False, exc.message, "fail", "see ecc plugins")
    broken = [r for r in plugin_set.records if r.error]
    loaded = [r for r in plugin_set.records if r.loaded]
    if broken:
        names = ", ".join(f"{r.group}:{r.name} ({r.error})" for r in broken)
        return Check(
            "plugins", False, f"{len(loaded)} loaded; broken: {names}", "fail",
            "reinstall or remove the broken plugins (ecc plugins shows them)",
        )  # fmt: skip
    return Check("plugins", True, f"{len(loaded)} loaded")


def _state_dir() -> Check:
    from ecc.runtime import paths

    directory = paths.state_dir()
    try:
        paths.ensure_private_dir(directory)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check(
            "state dir", False, f"{directory} is not writable: {exc.strerror or exc}", "fail",
            "make it writable, or point ECC_STATE_DIR elsewhere",
        )  # fmt: skip
    return Check("state dir", True, str(directory))


@click.command("doctor")
@json_option
def doctor_command(as_json: bool) -> None:
    """Check git, config, plugins, the state directory, each harness's CLI, hooks and MCP entry,
    the daemon and plugins' own requirements; each problem says how to fix it. Exit 1 if any
    check fails (warnings do not)."""
    from ecc.cli import doctor_checks as more

    checks = [_git(), _config(), _plugins(), _state_dir()]
    config = _view()
    if config is not None:
        checks += [*more.harness_checks(config), more.daemon_check(config)]
        checks += more.plugin_checks(config)
    ok = all(c.ok for c in checks)
    if as_json:
        emit_json({"ok": ok, "checks": [c.as_dict() for c in checks]})
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        for check in checks:
            say(f"{marks.get(check.level, 'FAIL')} {check.name}: {check.detail}")
            if check.fix and check.level != "ok":
                say(f"     fix: {check.fix}")
    if not ok:
        raise SystemExit(1)


def _view() -> object | None:
    """The config view, or None when the config is invalid (its own check says so)."""
    from ecc.contract.errors import EccError
    from ecc.runtime.config.view import view

    try:
        return view()
    except EccError:
        return None
