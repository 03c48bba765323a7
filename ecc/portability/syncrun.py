"""One ``ecc sync`` run: the source, the plan, the reconcile, then skills and MCP for each harness.

Skills and ecc's MCP server are not rendered here: each harness's adapter installs them
(``ecc_install_integration``, kinds ``skills`` and ``mcp``, scope ``project``), as ``ecc skills
install`` and ``ecc mcp install`` do. Every one of them is asked as a dry run first, so a refusal
anywhere leaves every file as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.portability.sync import (
    Outcome,
    Plan,
    apply,
    build_plan,
    read_state,
    reconcile,
    relative_to,
)
from ecc.portability.syncsource import check_inside, read_source

# The project's harness files are committed and shared, so they name ecc's MCP server as it is
# found on each person's PATH (as the hooks a project file names run plain ``ecc``).
PORTABLE_MCP_COMMAND = ["ecc-memory-mcp"]
MODES = ("apply", "dry-run", "check")


@dataclass
class Installed:
    """What one ``ecc_install_integration`` call changed (or would change)."""

    harness: str
    kind: str
    files: list[str]
    diff: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "kind": self.kind, "changed_files": self.files,
                "diff": self.diff, "message": self.message}  # fmt: skip


@dataclass
class Report:
    mode: str
    plan: Plan
    outcome: Outcome
    installed: list[Installed] = field(default_factory=list)
    not_installed: list[tuple[str, str]] = field(default_factory=list)  # (harness, kind)

    @property
    def up_to_date(self) -> bool:
        return not self.outcome.changes and not any(item.files for item in self.installed)


def _integrations(project: Path, settings: Any) -> list[tuple[str, dict[str, Any]]]:
    """(kind, options) of each integration ``[sync]`` asks for, its source validated."""
    wanted: list[tuple[str, dict[str, Any]]] = []
    if settings.get("skills"):
        from ecc.portability.skills import load_source

        folder = project / check_inside(project, project / settings["skills"])
        load_source(folder)  # one invalid skill refuses the sync before anything is written
        wanted.append(("skills", {"source": str(folder)}))
    if settings.get("mcp"):
        wanted.append(("mcp", {"mcp_command": list(PORTABLE_MCP_COMMAND)}))
    return wanted


def _install(
    plugin_set: Any, project: Path, harnesses: list[str], wanted: list[Any], dry_run: bool
) -> tuple[list[Installed], list[tuple[str, str]]]:
    from ecc.contract.types import IntegrationRequest

    done, missing = [], []
    for harness in harnesses:
        for kind, options in wanted:
            request = IntegrationRequest(
                kind=kind, action="install", scope="project", project_dir=project,
                dry_run=dry_run, options=dict(options),
            )  # fmt: skip
            hook = plugin_set.harness_hook(harness)
            result = hook.ecc_install_integration(harness=harness, request=request)
            if result is None:
                missing.append((harness, kind))
                continue
            files = [relative_to(project, Path(path)) for path in result.changed_files]
            done.append(Installed(harness, kind, files, result.diff, result.message))
    return done, missing


def run(
    project: Path,
    config: Any,
    harnesses: list[str],
    *,
    every_configured: bool,
    mode: str = "apply",
    force: bool = False,
    untrusted_hooks: list[dict[str, Any]] | None = None,
) -> Report:
    """Sync ``harnesses`` (canonical names) in ``project`` for ``config``'s ``[sync]``.

    ``every_configured``: ``harnesses`` are all of ``[sync] harnesses``, so a harness recorded
    before and no longer among them is retired (its files removed). ``mode``: ``apply`` writes,
    ``dry-run`` only computes, ``check`` computes ignoring ownership (every difference is drift).
    Refusals raise :class:`EccError` before anything is written.

    ``untrusted_hooks``: the project file's ``[[sync.hooks]]``, left out of ``config`` because
    the file is not trusted. A check or a dry run compares them (nothing runs), so CI on a fresh
    clone sees no false drift; a sync refuses to write them, or to take the synced ones out.
    """
    from ecc.runtime.plugins.loader import get_plugins

    if mode not in MODES:
        raise EccError(f"unknown sync mode {mode!r}")
    settings: Any = config["sync"]
    if untrusted_hooks is not None:
        if mode == "apply":
            raise EccError(
                "the project's [[sync.hooks]] run programs, so they apply only after `ecc trust` "
                "(review .ecc/config.toml first); nothing was written"
            )
        settings = {**settings, "hooks": untrusted_hooks}
    source = read_source(project, settings)
    plugin_set = get_plugins(config)

    def ask(harness: str, surface: str, given: Any) -> Any:
        hook = plugin_set.harness_hook(harness)
        return hook.ecc_sync_surface(harness=harness, surface=surface, source=given)

    state, state_text = read_state(project)
    retired: list[str] = []
    if every_configured:
        recorded = {name for entry in state.entries.values() for name in entry.harnesses}
        retired = sorted(recorded - set(harnesses))
    plan = build_plan(project, source, harnesses, ask, retired)
    outcome = reconcile(plan, state, state_text, force=force or mode == "check")
    if outcome.refusals:
        raise EccError("\n  ".join(outcome.refusals))
    wanted = _integrations(project, settings)
    installed, missing = _install(plugin_set, project, harnesses, wanted, dry_run=True)
    report = Report(mode, plan, outcome, installed, missing)
    if mode != "apply":
        return report
    apply(project, outcome)
    report.installed, _ = _install(plugin_set, project, harnesses, wanted, dry_run=False)
    return report
