"""``ecc run`` for a group: ``--harness a,b``, ``--count N``, ``--check``, ``--template NAME``.

The group is started through :func:`ecc.sessions.groups.start` (each member through
``ecc.sessions.service.start``). ``-d`` prints the group's id (``--json``: the group); without
it the command waits, says as each session ends, and prints the group's table (``ecc group
ID``), exiting 0 when every session completed and every check passed, else 1; Ctrl-C detaches
(130) and the sessions keep running.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, say
from ecc.contract.errors import EccError


def _timeout(text: str | None, default: float) -> float:
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise EccError(f"--check-timeout {text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise EccError("--check-timeout must be more than 0 seconds")
    return value


def run_group(
    task: str | None,
    *,
    harness: str | None,
    profile: str | None,
    use_worktree: bool | None,
    name: str,
    executor: str | None,
    cwd: Path | None,
    as_json: bool,
    detach: bool,
    count: int | None,
    check: str | None,
    check_timeout: str | None,
    template: str | None,
    variables: tuple[str, ...],
) -> None:
    from ecc.runtime.config.view import view
    from ecc.sessions import groups, templates
    from ecc.store.open import open_store

    config = view()
    where = (cwd or Path.cwd()).expanduser()
    timeout = _timeout(check_timeout, 600.0)
    if template is not None:
        if harness or profile or count is not None:
            raise EccError(
                "--template takes harnesses and profiles from the template; "
                "drop --harness, --profile and --count"
            )
        found, members = templates.resolve(
            config, template, templates.parse_vars(variables), where.resolve(), task
        )
        kind = found["mode"]
        check = check if check is not None else (found.get("check") or None)
        timeout = _timeout(check_timeout, float(found.get("check_timeout_secs") or 600.0))
        name = name or template
    else:
        if variables:
            raise EccError("--var fills a template's variables: give --template NAME")
        if task is None:
            raise click.MissingParameter(param_type="argument", param_hint="'TASK'")
        members = groups.fan_out(task, harness, count)
        if profile:
            members = [dataclasses.replace(m, profile=profile) for m in members]
        kind = "fanout"
    if use_worktree is not None:
        members = [dataclasses.replace(m, use_worktree=use_worktree) for m in members]
    store = open_store(config=config)
    group = groups.start(
        store,
        config,
        members,
        kind=kind,
        name=name,
        template=template,
        check=check,
        check_timeout=timeout,
        cwd=where,
        executor=executor,
        warn=_once(),
    )
    if detach:
        if as_json:
            emit_json(groups.report(store, group, with_changes=False))
        elif sys.stdout.isatty():
            say(f"Group started: {group['id']} ({_count(group)}); ecc group {group['id']}")
        else:
            say(group["id"])
        return
    if not as_json:
        say(f"Group {group['id']} started ({_count(group)}); Ctrl-C detaches.", err=True)
    try:
        final = _wait(store, config, group["id"], quiet=as_json)
    except KeyboardInterrupt:
        say(f"\nDetached from group {group['id']}; its sessions keep running.", err=True)
        sys.exit(130)
    shown = groups.report(store, final)
    if as_json:
        emit_json(shown)
    else:
        from ecc.cli.group_cmd import print_group

        print_group(shown)
    sys.exit(0 if shown["state"] == "completed" else 1)


def _once() -> Any:
    """A warning printer that says each line once (every member would repeat it)."""
    said: set[str] = set()

    def warn(line: str) -> None:
        if line not in said:
            said.add(line)
            say(line, err=True)

    return warn


def _count(group: dict[str, Any]) -> str:
    total = len(group["members"])
    return f"{total} session{'s' if total != 1 else ''}"


def _wait(store: Any, config: Any, group_id: str, *, quiet: bool, poll: float = 0.2) -> Any:
    """Poll until nothing more happens in the group, saying (on stderr) as each member ends."""
    from ecc.sessions import groups
    from ecc.sessions.daemon import reap_quietly
    from ecc.store.models import TERMINAL

    told: set[int] = set()
    next_reap = time.monotonic() + 1.0
    while True:
        group = store.get_group(group_id)
        sessions = {
            row["session_id"]: store.get_session(row["session_id"])
            for row in group["members"]
            if row["session_id"]
        }
        for row in group["members"]:
            session = sessions.get(row["session_id"]) if row["session_id"] else None
            ended = row["status"] in ("failed", "skipped") or (
                session is not None and session.state in TERMINAL
            )
            if ended and row["position"] not in told:
                told.add(row["position"])
                if not quiet:
                    say(_ended_line(row, session), err=True)
        if groups.finished(group, sessions):
            return group
        if time.monotonic() >= next_reap:  # a dead runner is noticed, as ecc run's follow does
            reap_quietly(store, config)
            next_reap = time.monotonic() + 1.0
        time.sleep(poll)


def _ended_line(row: dict[str, Any], session: Any) -> str:
    label = f"#{row['position']}" + (f" {row['step_name']}" if row["step_name"] else "")
    if session is None:
        return f"{label} {row['status']}: {row['note']}"
    check = f"; check {row['check_state']}" if row["check_state"] else ""
    return f"{label} session {session.id} {session.state.value}: {session.reason}{check}"
