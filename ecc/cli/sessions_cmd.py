"""``ecc sessions|status|logs|stop|resume|rm``: inspect and control sessions."""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.runtime.money import format_cost

remote_option = click.option(
    "--remote", metavar="NAME", help="Ask the server NAME (see ecc remote add)."
)


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    return open_store(config=config), config


def _age(text: str | None) -> str:
    from ecc.store.models import age_label

    return age_label(text)


@click.command("sessions")
@click.option("--all", "show_all", is_flag=True, help="Include finished sessions.")
@click.option(
    "--state", "states", multiple=True, metavar="STATE", help="Only sessions in STATE (repeatable)."
)
@click.option(
    "--repo",
    metavar="DIR",
    help="Only sessions of the git repository containing DIR (e.g. --repo .).",
)
@click.option(
    "--tree", is_flag=True, help="Show each session's children under it (sessions it started)."
)
@json_option
@remote_option
def sessions_command(
    show_all: bool,
    states: tuple[str, ...],
    repo: str | None,
    tree: bool,
    as_json: bool,
    remote: str | None,
) -> None:
    """List sessions, newest first (active ones unless --all or --state; --state waiting:
    those with a tool call waiting for your decision; --tree: children under their parent)."""
    if remote and repo:
        raise click.UsageError("--repo applies to this machine's sessions, not --remote")
    if remote:
        from ecc.remote.client import Client

        wanted_states = [s.strip().lower() for s in states]
        listed = Client.for_remote(remote).list_sessions(wanted_states or None, show_all)
        _print_sessions(listed, as_json, show_all or bool(states), tree)
        return
    from ecc.store.models import listed_sessions

    store, config = _open()
    from ecc.sessions.daemon import reap_quietly

    reap_quietly(store, config)
    rows = listed_sessions(store, states, show_all)
    if repo is not None:
        root = _repository_of(repo)
        rows = [s for s in rows if _session_repository(s) == root]
    _print_sessions([s.as_dict() for s in rows], as_json, show_all or bool(states), tree)


def _print_sessions(
    rows: list[dict[str, Any]], as_json: bool, any_state: bool, tree: bool = False
) -> None:
    """The listing of local and remote sessions alike (rows as ``ecc status --json`` shapes a
    session): JSON, or a table under a header. ``tree``: each parent followed by its children,
    indented (``depth`` in JSON)."""
    depths = [0] * len(rows)
    if tree:
        from ecc.sessions.delegation import tree_order

        ordered = tree_order(rows)
        rows, depths = [row for row, _ in ordered], [level for _, level in ordered]
    if as_json:
        if tree:
            rows = [{**row, "depth": level} for row, level in zip(rows, depths, strict=True)]
        emit_json(rows)
        return
    if not rows:
        say("No sessions." if any_state else "No active sessions (--all shows finished).")
        return
    repositories = [_repository_name(s) for s in rows]
    width = min(max(len("REPOSITORY"), *(len(name) for name in repositories)), 24)
    say(f"{'ID':<12}  {'STATE':<9} {'HARNESS':<8} {'AGE':>9}  {'REPOSITORY':<{width}}  TASK")
    for s, repository, level in zip(rows, repositories, depths, strict=True):
        label = f"{s['name']}: " if s.get("name") else ""
        if level:
            label = "  " * (level - 1) + "└─ " + label
        task = (str(s.get("task") or "").splitlines() or [""])[0][:60]
        state = s.get("display_state") or s["state"]  # an older server sends state alone
        if s.get("open_conflict"):
            state += "!"  # part of an open conflict: ecc conflicts
        say(
            f"{s['id']:<12}  {state:<9} {s['harness']:<8} {_age(s.get('created_at')):>9}  "
            f"{repository[:width]:<{width}}  {label}{task}"
        )


def _repository_name(row: dict[str, Any]) -> str:
    where = row.get("repo_root") or row.get("project_dir") or row.get("repository") or ""
    return str(where).rstrip("/").rsplit("/", 1)[-1] or "-"


def _repository_of(directory: str) -> Any:
    """The top level of the git repository containing ``directory`` (itself outside one)."""
    import subprocess
    from pathlib import Path

    from ecc.contract.errors import EccError

    path = Path(directory).expanduser()
    if not path.is_dir():
        raise EccError(f"--repo {directory}: no such directory")
    found = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    top = found.stdout.strip() if found.returncode == 0 else ""
    return Path(top or path).resolve()


def _session_repository(session: Any) -> Any:
    """The repository a session works on (its directory when it was not in one)."""
    from pathlib import Path

    where = session.repo_root or session.project_dir
    return Path(where).resolve() if where else Path()


@click.command("status")
@click.argument("session_ref", metavar="[ID|latest]", default="latest")
@json_option
def status_command(session_ref: str, as_json: bool) -> None:
    """Show one session in detail (default: the latest)."""
    from ecc.sessions.daemon import reap_quietly
    from ecc.sessions.manager import find

    store, config = _open()
    reap_quietly(store, config)
    session = find(store, session_ref)
    events = store.list_events(session.id)
    lines = store.count_output(session.id)
    approval = _pending_approval(store, session)
    conversation = store.list_messages(session.id)
    conflicts = store.list_conflicts(open_only=True, session_id=session.id)
    children = [f"{child.id} ({child.display_state})" for child in store.children(session.id)]
    if as_json:
        from ecc.observability import toolcalls as tool_calls

        emit_json(
            {
                **session.as_dict(),
                "output_lines": lines,
                "events": events,
                "approval": approval,
                "conflicts": conflicts,
                "conversation": conversation,
                "tool_calls": tool_calls.listing(store, session.id),
            }
        )
        return
    fields = [
        ("Session", session.id + (f" ({session.name})" if session.name else "")),
        (
            "State",
            f"{session.display_state} - {session.reason}"
            if session.reason
            else session.display_state,
        ),
        *([("Approval", _approval_text(approval))] if approval else []),
        *[("Conflict", conflict_text(row)) for row in conflicts],
        ("Task", session.task),
        ("Harness", session.harness),
        ("Enforced", session.enforced_text),
        ("Profile", session.profile_name or "-"),
        ("Directory", session.working_dir),
        (
            "Worktree",
            f"{session.worktree_path} ({session.worktree_branch})"
            if session.worktree_path
            else ("pending" if session.use_worktree else "none"),
        ),
        (
            "Base",
            f"{session.base_branch or 'detached'} @ {(session.base_commit or '')[:12]}"
            if session.use_worktree
            else "-",
        ),
        ("PR", session.pr_url or "-"),
        *([("Parent", session.parent_id)] if session.parent_id else []),
        *([("Children", ", ".join(children))] if children else []),
        (
            "Runner",
            f"pid {session.runner_pid} on {session.runner_host}" if session.runner_pid else "-",
        ),
        ("Harness pid", str(session.harness_pid) if session.harness_pid else "-"),
        ("Exit", _exit_text(session)),
        ("Output", f"{lines} line(s)"),
        ("Tokens", f"{session.input_tokens} in, {session.output_tokens} out"),
        ("Cost", format_cost(session.cost_usd)),
        ("Heartbeat", _age(session.heartbeat_at)),
        ("Created", session.created_at),
        ("Started", session.started_at or "-"),
        ("Ended", session.ended_at or "-"),
    ]
    for key, value in fields:
        say(f"{key + ':':<13}{value}")
    if len(conversation) > 1 or any(m["status"] == "queued" for m in conversation):
        say("Conversation:")
        for turn in conversation:
            _say_turn(turn, session.active)
    say("Events:")
    for event in events[-10:]:
        move = (
            f"{event['from_state'] or '-'} -> {event['to_state']}"
            if event["to_state"]
            else event["kind"]
        )
        say(f"  {event['created_at']}  {move}: {event['reason']}")


TURN_CHARS = 2000  # of each turn in ``ecc status``; --json has them whole


def _say_turn(turn: dict[str, Any], active: bool) -> None:
    """One turn of the conversation: who, in which run, and the text (sanitised by say)."""
    who = "agent" if turn["role"] == "agent" else "you"
    if turn["status"] == "queued":
        who += " (queued)"
    elif turn["role"] == "user" and turn["run"] is None and not active:
        who += " (not delivered: the run ended before the harness started)"
    run = f"run {turn['run']}" if turn["run"] is not None else "next"
    text = turn["text"]
    more = len(text) - TURN_CHARS
    lines = text[:TURN_CHARS].splitlines() or [""]
    if more > 0:
        lines[-1] += f" … ({more} more characters)"
    say(f"  [{run}] {who}: {lines[0]}")
    for line in lines[1:]:
        say(f"      {line}")


def _pending_approval(store: Any, session: Any) -> dict[str, Any] | None:
    """The held tool call a waiting session needs a decision on (None when it has none)."""
    if session.display_state != "waiting":
        return None
    from ecc.observability import approvals

    pending = approvals.pending(store, session.id)
    return pending[0] if pending else None


def conflict_text(row: dict[str, Any]) -> str:
    """An open conflict incident in ``ecc status``: what, and how to close it."""
    from ecc.sessions.conflicts import describe

    return f"{row['id']}: {describe(row)} - ecc conflicts resolve|dismiss {row['id']}"


def _approval_text(approval: dict[str, Any]) -> str:
    score = f"risk {approval['score']:.2f}, " if approval["score"] is not None else ""
    return (
        f"{approval['id']}: {approval['tool']} {approval['input_excerpt'][:60]} ({score}"
        f"until {approval['expires_at']}) - answer: ecc approve {approval['id']} | "
        f"ecc deny {approval['id']} [--reason TEXT]"
    )


def _exit_text(session: Any) -> str:
    from ecc.sessions.procs import signal_name

    if session.exit_signal:
        return f"killed by {signal_name(session.exit_signal)}"
    if session.exit_code is not None:
        return f"code {session.exit_code}"
    return "-"


@click.command("logs")
@click.argument("session_ref", metavar="ID")
@click.option(
    "-f", "--follow", "follow_", is_flag=True, help="Keep printing new lines until it ends."
)
@click.option("--tail", type=click.IntRange(min=0), help="Only the last N lines.")
@click.option("--stream", type=click.Choice(["stdout", "stderr"]), help="Only one stream.")
@json_option
@remote_option
def logs_command(
    session_ref: str,
    follow_: bool,
    tail: int | None,
    stream: str | None,
    as_json: bool,
    remote: str | None,
) -> None:
    """Show a session's captured output (stderr lines go to stderr)."""
    if remote:
        from ecc.remote.client import logs_remote

        logs_remote(remote, session_ref, follow=follow_, tail=tail, stream=stream, as_json=as_json)
        return
    from ecc.cli.run_cmd import follow
    from ecc.sessions.manager import find

    store, _ = _open()
    session = find(store, session_ref)
    if tail is not None:
        rows = store.tail_output(session.id, tail, stream) if tail else []
    else:
        rows = store.read_output(session.id, stream=stream)
    if as_json and not follow_:
        emit_json([{"session_id": session.id, **row} for row in rows])
        return
    headers = _run_headers(store, session) if not (as_json or stream) else []
    while rows and len(headers) > 1 and headers[1][0] < rows[0]["seq"]:
        headers.pop(0)  # a tail: only the run its first line belongs to is named
    last = 0
    for row in rows:
        while headers and headers[0][0] < row["seq"]:
            say(headers.pop(0)[1])
        last = row["seq"]
        _print_row(row, as_json, session.id)
    for _, header in headers:  # runs with no output (yet)
        say(header)
    if follow_:
        if tail == 0:
            last = store.max_seq(session.id)
        try:
            _follow(store, session.id, last, stream, as_json, follow)
        except KeyboardInterrupt:
            pass


def _run_headers(store: Any, session: Any) -> list[tuple[int, str]]:
    """``(seq, line)``: a header before the first line of each run with its prompt, once the
    session has had more than one run (a single run's log stays exactly its output)."""
    prompts = [
        m for m in store.list_messages(session.id) if m["role"] == "user" and m["run"] is not None
    ]
    if len(prompts) < 2:
        return []
    headers = []
    for index, prompt in enumerate(prompts):
        kind = ""
        if index:
            kind = " (resumed)" if prompt["text"] == session.task else " (follow-up)"
        first = (prompt["text"].splitlines() or [""])[0][:100]
        headers.append((prompt["after_seq"] or 0, f"── run {prompt['run']}{kind}: {first}"))
    return headers


def _print_row(row: dict[str, Any], as_json: bool, session_id: str) -> None:
    if as_json:
        emit_json({"session_id": session_id, **row}, indent=None)
    else:
        say(row["line"], err=row["stream"] == "stderr")


def _follow(
    store: Any, session_id: str, last: int, stream: str | None, as_json: bool, follow: Any
) -> None:
    if not as_json:
        follow(store, session_id, after_seq=last, stream=stream)
        return
    import time

    from ecc.sessions.daemon import reap_quietly
    from ecc.store.models import TERMINAL

    next_reap = time.monotonic() + 1.0
    while True:
        current = store.get_session(session_id)
        rows = store.read_output(session_id, after_seq=last, stream=stream, limit=5000)
        for row in rows:
            last = row["seq"]
            _print_row(row, True, session_id)
        if not rows and (current is None or current.state in TERMINAL):
            return
        if not rows:
            if time.monotonic() >= next_reap:
                reap_quietly(store)
                next_reap = time.monotonic() + 1.0
            time.sleep(0.1)


@click.command("stop")
@click.argument("session_ref", metavar="ID")
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="Seconds between SIGTERM and SIGKILL (default: stop_grace_secs).",
)
@json_option
@remote_option
def stop_command(session_ref: str, grace: float | None, as_json: bool, remote: str | None) -> None:
    """Stop a session: SIGTERM its process group, SIGKILL after the grace period.

    The worktree and its branch are kept: no work is lost.
    """
    if remote:
        from ecc.remote.client import stop_remote

        stop_remote(remote, session_ref, grace, as_json)
        return
    from ecc.sessions import manager

    store, config = _open()
    session = manager.find(store, session_ref)
    final = manager.stop(store, session, config, grace)
    if as_json:
        emit_json(final.as_dict())
    else:
        say(f"Session {final.id} {final.state.value}: {final.reason}")


@click.command("resume")
@click.argument("session_ref", metavar="ID")
@json_option
def resume_command(session_ref: str, as_json: bool) -> None:
    """Resume a failed or stopped session in the same worktree."""
    from ecc.sessions import manager

    store, config = _open()
    session = manager.resume(store, manager.find(store, session_ref), config)
    if as_json:
        emit_json(session.as_dict())
    else:
        say(f"Session resumed: {session.id}")


@click.command("rm")
@click.argument("session_ref", metavar="ID")
@json_option
def rm_command(session_ref: str, as_json: bool) -> None:
    """Forget a finished session (refuses a live one).

    A clean worktree is removed; its branch is deleted only when merged into the base.
    """
    from ecc.sessions import manager

    store, config = _open()
    result = manager.remove(store, manager.find(store, session_ref), config)
    if as_json:
        emit_json(result)
        return
    say(f"Session removed: {result['id']}")
    worktree = result.get("worktree")
    if worktree and worktree.get("kept_reason"):
        say(f"Kept: {worktree['kept_reason']}")
