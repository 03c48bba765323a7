"""The checks of ``ecc doctor`` beyond the core's own: harnesses, integrations, daemon, plugins.

Nothing here names a harness. Each harness comes from the adapters (``ecc_harnesses``): its
CLI is the declared ``program``, asked for ``--version``; whether ecc's hooks and MCP entry are
in its configuration is asked of its adapter as a dry-run install (``ecc_install_integration``
with ``dry_run``): nothing to change means installed. A plugin with requirements of its own (a
notifier's program) reports them through the ``ecc_doctor_checks`` hook.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass
class Check:
    """One line of ``ecc doctor``: ``level`` ok, warn (works, but see ``fix``) or fail."""

    name: str
    ok: bool
    detail: str
    level: str = OK
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def passed(name: str, detail: str) -> Check:
    return Check(name, True, detail)


def warned(name: str, detail: str, fix: str) -> Check:
    return Check(name, True, detail, WARN, fix)


def failed(name: str, detail: str, fix: str) -> Check:
    return Check(name, False, detail, FAIL, fix)


def harness_checks(config: Any) -> list[Check]:
    """Each harness's CLI (found, version), then its hooks and MCP entry."""
    from ecc.cli.harness_cmd import program_version
    from ecc.contract.errors import EccError
    from ecc.sessions.harnesses import available

    try:
        table = available(config)
    except EccError as exc:
        return [failed("harnesses", exc.message, "fix the plugin named above (ecc plugins)")]
    checks: list[Check] = []
    for name, info in table.items():
        if not info.program:
            continue
        path = shutil.which(info.program)
        title = f"harness {name}"
        if path is None:
            fix = f"install {info.program} and put it on PATH, or use another --harness"
            if name == config.default_harness:
                checks.append(
                    failed(title, f"{info.program} is not on PATH (default_harness)", fix)
                )
            else:
                checks.append(warned(title, f"{info.program} is not on PATH", fix))
            continue
        version = program_version(path)
        checks.append(passed(title, f"{version} ({path})" if version else f"{path} (no version)"))
        for kind, command in (("hooks", "hooks"), ("mcp", "mcp")):
            if kind in info.capabilities:
                checks.append(_integration(name, kind, command, config))
    return checks


def _integration(harness: str, kind: str, command: str, config: Any) -> Check:
    """Whether ``ecc {command} install`` would change nothing in the user or project scope."""
    from ecc.contract.errors import EccError
    from ecc.contract.types import IntegrationRequest
    from ecc.runtime import paths
    from ecc.runtime.plugins.loader import get_plugins

    title = f"{kind} {harness}"
    fix = f"ecc {command} install --harness {harness} --user (or --project in a repository)"
    project = paths.find_project_root()
    installed: list[str] = []
    for scope in ("project", "user"):
        if scope == "project" and project is None:
            continue
        request = IntegrationRequest(
            kind=kind,
            action="install",
            scope=scope,
            project_dir=project or Path.cwd(),
            dry_run=True,
            options=_options(kind, scope),
        )
        try:
            adapter = get_plugins(config).harness_hook(harness)
            result = adapter.ecc_install_integration(harness=harness, request=request)
        except (EccError, OSError, ValueError) as exc:
            message = exc.message if isinstance(exc, EccError) else str(exc)
            return warned(title, f"cannot tell: {message}", fix)
        if result is None:
            return warned(title, f"no adapter can install {kind} for {harness}", "")
        if not result.changed_files:
            installed.append(scope)
    if installed:
        return passed(title, "installed (" + ", ".join(installed) + ")")
    return warned(title, "not installed, or not as ecc would write it now", fix)


def _options(kind: str, scope: str) -> dict[str, Any]:
    """What ``ecc hooks install`` / ``ecc mcp install`` pass their adapter."""
    if kind == "hooks":
        from ecc.cli.hooks_cmd import ecc_command, hook_timeout

        return {"command": ecc_command(scope), "hook_timeout": hook_timeout()}
    from ecc.cli.mcp_cmd import mcp_command

    return {"mcp_command": mcp_command()}


def daemon_check(config: Any) -> Check:
    """Whether an ``ecc daemon`` holds this store's daemon lock (and its pid)."""
    from ecc.contract.errors import EccError
    from ecc.store.open import open_store

    fix = "start `ecc daemon` (e.g. as a user service): it recovers crashed sessions, starts queued"
    try:
        store = open_store(config=config)
    except EccError as exc:
        return failed("daemon", f"the store cannot be opened: {exc.message}", "see ecc config path")
    try:
        lock = store.daemon_lock()
        try:
            lock.acquire()
        except EccError as exc:  # held: the message names the holder's pid
            return passed(
                "daemon", exc.message.replace("another ecc daemon is already", "").strip()
            )
        lock.release()
    finally:
        store.close()
    return warned("daemon", "not running (reads still fail dead sessions themselves)", fix)


def plugin_checks(config: Any) -> list[Check]:
    """What plugins report about their own requirements (the ``ecc_doctor_checks`` hook)."""
    from ecc.runtime.plugins.calls import call_each
    from ecc.runtime.plugins.loader import get_plugins

    checks: list[Check] = []
    for outcome in call_each(get_plugins(config).hook.ecc_doctor_checks, config=config):
        if outcome.error is not None:  # a plugin's bug must not hide the other checks
            checks.append(failed(f"plugin {outcome.name}", outcome.describe_error(), ""))
            continue
        for answer in outcome.result or []:
            checks.append(_reported(outcome.name, answer))
    return checks


def _reported(plugin: str, answer: Any) -> Check:
    """A plugin's answer as a :class:`Check`; a malformed one is itself a failed check."""
    try:
        level = answer.get("level", OK)
        if level not in (OK, WARN, FAIL):
            raise ValueError(f"level {level!r}")
        return Check(
            str(answer["name"]),
            level != FAIL,
            str(answer.get("detail", "")),
            level,
            str(answer.get("fix", "")),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return failed(f"plugin {plugin}", f"ecc_doctor_checks answered {answer!r:.80} ({exc})", "")
