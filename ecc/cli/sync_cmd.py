"""``ecc sync``: install the project's shared rules, commands, hooks, skills and MCP server into
every harness named in ``[sync] harnesses``; ``--check`` for CI.

The command resolves harness names and prints; the work is :mod:`ecc.portability.syncrun`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say

NO_HARNESSES = (
    "no harnesses to sync: name them in [sync] harnesses of .ecc/config.toml "
    '(ecc config set sync.harnesses \'["claude", "codex"]\' --project) or give --harness NAME'
)


def _harnesses(given: tuple[str, ...], configured: list[str], config: Any) -> list[str]:
    from ecc.contract.errors import EccError
    from ecc.sessions.harnesses import canonical_name

    names = []
    for name in given or configured:
        try:
            canonical = canonical_name(str(name), config)
        except EccError as exc:
            where = "" if given else " in [sync] harnesses"
            raise EccError(f"{exc.message}{where}") from None
        if canonical not in names:
            names.append(canonical)
    if not names:
        raise EccError(NO_HARNESSES)
    return names


def _untrusted_hooks(project: Path) -> list[dict[str, Any]] | None:
    """The project file's ``[[sync.hooks]]`` when they were left out for want of ``ecc trust``
    (validated as the trusted ones would be), else None."""
    from pydantic import ValidationError

    from ecc.contract.errors import EccError
    from ecc.runtime.config import model, overrides
    from ecc.runtime.config.sections import SyncHookSettings

    loaded = model.load(cwd=project, overrides=overrides.pairs())
    if not any(item.key == "sync.hooks" for item in loaded.ignored):
        return None
    path = project / ".ecc" / "config.toml"
    table = model.parse_toml(model.read_config_bytes(path), path).get("sync") or {}
    try:
        return [
            SyncHookSettings.model_validate(hook).model_dump() for hook in table.get("hooks") or []
        ]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise EccError(f"{path}: [[sync.hooks]] {first['msg']}") from None


def _print(report: Any, as_json: bool, verbose: bool = False) -> None:
    changes = report.outcome.changes
    if as_json:
        files = [
            {"path": c.relative, "action": c.action, "harnesses": c.harnesses, "diff": c.diff()}
            for c in changes
        ]
        for item in report.installed:
            files += [
                {"path": path, "action": "write", "harnesses": [item.harness], "diff": item.diff}
                for path in item.files
            ]
        emit_json(
            {
                "mode": report.mode,
                "harnesses": report.plan.harnesses,
                "retired": report.plan.retired,
                "plans": [row.as_dict() for row in report.plan.rows],
                "unsupported": report.plan.unsupported,
                "not_installed": [{"harness": h, "kind": k} for h, k in report.not_installed],
                "files": files,
                "integrations": [item.as_dict() for item in report.installed],
                "up_to_date": report.up_to_date,
            }
        )
        return
    if report.mode != "apply":
        for change in changes:
            _diff(change.diff())
        for item in report.installed:
            _diff(item.diff)
    # how each harness carries each surface, and what it loses: when something changes (or
    # is asked for), not on every check and every run that finds nothing to do
    quiet = not verbose and (report.mode == "check" or report.up_to_date)
    for name in report.plan.harnesses:
        rows = [row for row in report.plan.rows if row.harness == name]
        if not rows:
            say(f"{name}: unsupported (its adapter gives no sync plan)")
            continue
        if quiet:
            continue
        say(f"{name}: " + ", ".join(f"{row.surface} {row.mode}" for row in rows))
        for note in dict.fromkeys(note for row in rows for note in row.notes):
            say(f"  {note}")
    for harness, kind in report.not_installed:
        say(f"{harness}: {kind} not supported by its adapter")
    if report.mode == "check":
        return
    prefix = "(dry run) would " if report.mode == "dry-run" else ""
    for change in changes:
        say(f"{prefix}{'remove' if change.action == 'remove' else 'write'} {change.relative}")
    for item in report.installed:
        for path in item.files:
            say(f"{prefix}write {path} ({item.harness} {item.kind})")
    if report.up_to_date:
        say("up to date: nothing to write")


def _diff(text: str) -> None:
    for line in text.splitlines():
        say(line)


@click.command("sync")
@click.option("--check", is_flag=True, help="Exit 1 with a diff when a harness copy has drifted.")
@click.option("--dry-run", is_flag=True, help="Show the diffs; write nothing.")
@click.option(
    "--harness",
    "given",
    multiple=True,
    help="Only this harness (repeatable; default: [sync] harnesses).",
)
@click.option(
    "--force", is_flag=True, help="Overwrite files ecc does not own or that were changed by hand."
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Show each harness's modes and notes on every run."
)
@json_option
def sync_command(
    check: bool,
    dry_run: bool,
    given: tuple[str, ...],
    force: bool,
    verbose: bool,
    as_json: bool,
) -> None:
    """Write the shared source (instructions, rules/, commands/, [[sync.hooks]], skills, MCP)
    into each harness's own files, and record what was written in .ecc/sync-state.json.

    A second run writes nothing; a rule removed from the source is removed from every harness;
    a file ecc does not own, or that someone changed, is never overwritten (nothing is written).
    """
    from ecc.contract.errors import EccError
    from ecc.portability.syncrun import run
    from ecc.runtime import paths
    from ecc.runtime.config.view import ignored_notice, view

    if check and dry_run:
        raise click.UsageError("give --check or --dry-run, not both")
    project = paths.find_project_root() or Path.cwd().resolve()
    config = view(project)
    notice = ignored_notice(project)
    untrusted = None
    if notice:
        say(notice, err=True)
        untrusted = _untrusted_hooks(project)
    configured = list(config["sync"]["harnesses"])
    harnesses = _harnesses(given, configured, config)
    mode = "check" if check else "dry-run" if dry_run else "apply"
    report = run(
        project,
        config,
        harnesses,
        every_configured=not given,
        mode=mode,
        force=force,
        untrusted_hooks=untrusted,
    )
    _print(report, as_json, verbose)
    if check:
        drifted = [c.relative for c in report.outcome.changes]
        drifted += [path for item in report.installed for path in item.files]
        if drifted:
            raise EccError(
                f"{len(drifted)} file(s) drifted from the source: {', '.join(drifted)} "
                "(run `ecc sync`)"
            )
        if not as_json:
            say(f"in sync: {', '.join(harnesses)}")
