"""Conflicts between sessions, with real shell sessions in real git worktrees, the real daemon
(``ecc daemon --once``) and real stores (SQLite and PostgreSQL).

Each session's task writes a file and then sleeps, so both are running while the daemon looks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ecc.store.base import Store
from tests.conftest import git, run_ecc
from tests.sessions.conftest import ecc_json, wait_state, wait_until, write_config

WRITES = "printf '%s\\n' {text} > shared.txt && sleep 60"


def _daemon_pass() -> dict[str, Any]:
    """One pass of a real daemon, run outside the repository."""
    result = run_ecc("daemon", "--once", "--json", cwd=Path(os.environ["HOME"]))
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _start_writer(store: Store, repo: Path, text: str, *extra: str) -> Any:
    """A running shell session that has written ``text`` into shared.txt of its directory."""
    task = WRITES.format(text=text)
    session_id = ecc_json("start", "--harness", "shell", *extra, task, cwd=repo)["id"]
    session = wait_state(store, session_id, "running")

    def written() -> bool:
        current = store.get_session(session_id)
        where = Path(current.worktree_path or current.working_dir) if current else repo
        target = where / "shared.txt"
        return target.is_file() and target.read_text().strip() == text

    wait_until(written, what=f"session {session_id} to write shared.txt")
    return session


def _repo_with_shared(git_repo: Path) -> Path:
    (git_repo / "shared.txt").write_text("base\n")
    git(git_repo, "add", "shared.txt")
    git(git_repo, "commit", "-q", "-m", "shared")
    return git_repo


def _kinds(store: Store, session_id: str) -> list[str]:
    return [event["kind"] for event in store.list_events(session_id)]


def test_two_writers_later_paused_then_resumed_after_merge(git_repo: Path, store: Store) -> None:
    repo = _repo_with_shared(git_repo)
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    assert first.worktree_path and second.worktree_path  # each in its own worktree

    report = _daemon_pass()["conflicts"]
    assert len(report) == 1, report
    acted = report[0]
    assert acted["paths"] == ["shared.txt"] and acted["action"] == "paused"
    assert acted["paused"] == second.id and acted["kept"] == first.id  # escalate: the later

    paused = wait_state(store, second.id, "stopped")
    assert paused.reason.startswith(f"stopped: conflict with session {first.id} on shared.txt")
    assert "escalate" in paused.reason
    assert store.get_session(first.id).state.value == "running"  # the earlier one goes on
    assert "conflict" in _kinds(store, first.id)
    assert {"conflict", "conflict_stop"} <= set(_kinds(store, second.id))

    sent = [n for n in store.list_notifications() if n["event"] == "session_conflict"]
    assert len(sent) == 1 and sent[0]["session_id"] == second.id
    assert sent[0]["data"]["paths"] == ["shared.txt"] and sent[0]["data"]["kept"] == first.id
    assert sent[0]["data"]["delivery"] == {"log": "sent"}

    [incident] = ecc_json("conflicts")
    assert incident["status"] == "paused" and incident["path"] == "shared.txt"
    assert incident["paused_session"] == second.id and incident["kept_session"] == first.id
    listing = run_ecc("conflicts")
    assert f"{second.id} paused for {first.id} (escalate)" in listing.stdout
    status = run_ecc("status", second.id)
    assert f"Conflict:    {incident['id']}: shared.txt" in status.stdout
    assert ecc_json("status", second.id)["conflicts"][0]["id"] == incident["id"]
    rows = {row["id"]: row for row in ecc_json("sessions")}  # the paused one is still listed
    assert rows[second.id]["open_conflict"] == incident["id"]
    table = run_ecc("sessions").stdout
    assert any(line.startswith(second.id) and "stopped!" in line for line in table.splitlines())

    # a second pass (or a second daemon) records nothing again, and resumes nothing yet
    assert _daemon_pass()["conflicts"] == []
    assert store.get_session(second.id).state.value == "stopped"

    # the first session is stopped, its change committed and merged: the second runs again
    assert run_ecc("stop", first.id).returncode == 0
    committed = run_ecc("worktree", "commit", first.id, "-m", "first's change")
    assert committed.returncode == 0, committed.stderr
    merged = run_ecc("worktree", "merge", first.id, cwd=repo)
    assert merged.returncode == 0, merged.stderr
    assert (repo / "shared.txt").read_text() == "first\n"
    [resumed] = _daemon_pass()["conflicts"]
    assert resumed["id"] == second.id and resumed["action"] == "resumed"
    assert f"session {first.id} was merged into main" in resumed["reason"]
    wait_state(store, second.id, "running")
    assert ecc_json("conflicts") == []
    [closed] = ecc_json("conflicts", "--all")
    assert closed["status"] == "resumed" and "merged" in closed["resolution"]


@pytest.mark.policy_only
def test_last_write_wins_pauses_the_earlier(git_repo: Path, store: Store) -> None:
    write_config(Path(os.environ["HOME"]), conflict_resolution={"strategy": "last_write_wins"})
    repo = _repo_with_shared(git_repo)
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    [acted] = _daemon_pass()["conflicts"]
    assert acted["paused"] == first.id and acted["kept"] == second.id
    paused = wait_state(store, first.id, "stopped")
    assert "last_write_wins" in paused.reason
    assert store.get_session(second.id).state.value == "running"


@pytest.mark.policy_only
def test_disabled_or_different_files_leave_sessions_alone(git_repo: Path, store: Store) -> None:
    repo = _repo_with_shared(git_repo)
    one = ecc_json("start", "--harness", "shell", "echo 1 > one.txt && sleep 60", cwd=repo)
    two = ecc_json("start", "--harness", "shell", "echo 2 > two.txt && sleep 60", cwd=repo)
    for session_id, name in ((one["id"], "one.txt"), (two["id"], "two.txt")):
        session = wait_state(store, session_id, "running")
        wait_until(lambda s=session, n=name: (Path(s.worktree_path) / n).is_file())
    assert _daemon_pass()["conflicts"] == []  # different files: no conflict

    write_config(Path(os.environ["HOME"]), conflict_resolution={"enabled": False})
    _start_writer(store, repo, "first")
    _start_writer(store, repo, "second")
    assert _daemon_pass()["conflicts"] == []
    assert ecc_json("conflicts", "--all") == []
    assert all(s.state.value == "running" for s in store.list_sessions())


@pytest.mark.policy_only
def test_untrusted_project_cannot_switch_it_off(git_repo: Path, store: Store) -> None:
    """enabled = false loosens the policy: from an untrusted project file it is ignored, while
    a stricter value (notify_lead stays on) or another strategy applies."""
    repo = _repo_with_shared(git_repo)
    (repo / ".ecc").mkdir()
    (repo / ".ecc" / "config.toml").write_text(
        '[conflict_resolution]\nenabled = false\nstrategy = "last_write_wins"\n'
    )
    git(repo, "add", ".ecc")
    git(repo, "commit", "-q", "-m", "project config")
    shown = ecc_json("config", "show", "--origin", cwd=repo)
    assert "conflict_resolution.enabled" in json.dumps(shown.get("ignored", shown))
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    [acted] = _daemon_pass()["conflicts"]
    assert acted["strategy"] == "last_write_wins"  # the project's strategy applies untrusted
    assert acted["paused"] == first.id and acted["kept"] == second.id


def test_resolve_resumes_and_dismiss_leaves_it(git_repo: Path, store: Store) -> None:
    repo = _repo_with_shared(git_repo)
    _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    _daemon_pass()
    wait_state(store, second.id, "stopped")
    [incident] = ecc_json("conflicts")

    unknown = run_ecc("conflicts", "resolve", "99999")
    assert unknown.returncode == 1 and unknown.stderr.strip() == (
        "Error: no conflict 99999 (ecc conflicts lists them)"
    )
    resolved = ecc_json("conflicts", "resolve", str(incident["id"]))
    assert resolved["status"] == "resolved" and resolved["resumed"] == second.id
    wait_state(store, second.id, "running")
    again = run_ecc("conflicts", "dismiss", str(incident["id"]))
    assert again.returncode == 1 and "already resolved" in again.stderr
    # the resumed session still shares the file with the first one: known, not re-opened
    assert _daemon_pass()["conflicts"] == []


def test_dismiss_keeps_the_session_paused(git_repo: Path, store: Store) -> None:
    repo = _repo_with_shared(git_repo)
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    _daemon_pass()
    wait_state(store, second.id, "stopped")
    [incident] = ecc_json("conflicts")
    dismissed = run_ecc("conflicts", "dismiss", str(incident["id"]))
    assert dismissed.returncode == 0, dismissed.stderr
    assert dismissed.stdout == f"Conflict {incident['id']} dismissed.\n"  # nothing resumed
    [closed] = ecc_json("conflicts", "--all")
    assert closed["status"] == "dismissed"
    assert run_ecc("stop", first.id).returncode == 0
    (Path(first.worktree_path) / "shared.txt").write_text("base\n")  # nothing left of it
    assert run_ecc("rm", first.id).returncode == 0  # the partner is gone, but it was dismissed
    assert _daemon_pass()["conflicts"] == []
    assert store.get_session(second.id).state.value == "stopped"


@pytest.mark.policy_only
def test_partner_removed_resumes(git_repo: Path, store: Store) -> None:
    repo = _repo_with_shared(git_repo)
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    _daemon_pass()
    wait_state(store, second.id, "stopped")
    assert run_ecc("stop", first.id).returncode == 0
    worktree = Path(store.get_session(first.id).worktree_path)
    (worktree / "shared.txt").write_text("base\n")  # its change undone: nothing left of it
    removed = run_ecc("rm", first.id)
    assert removed.returncode == 0, removed.stderr
    [resumed] = _daemon_pass()["conflicts"]
    assert resumed["action"] == "resumed" and f"{first.id} was removed" in resumed["reason"]
    wait_state(store, second.id, "running")


@pytest.mark.policy_only
def test_tool_calls_and_shared_checkout(git_repo: Path, store: Store) -> None:
    """Write tool calls name the file (absolute or relative; found before any git change), and
    sessions sharing the checkout without worktrees count too."""
    repo = _repo_with_shared(git_repo)
    one = wait_state(
        store, ecc_json("start", "--harness", "shell", "sleep 60", cwd=repo)["id"], "running"
    )
    two = wait_state(
        store, ecc_json("start", "--harness", "shell", "sleep 60", cwd=repo)["id"], "running"
    )
    store.record_tool_call(
        session_id=one.id,
        harness="claude",
        tool="Write",
        input={"file_path": str(Path(one.worktree_path) / "src" / "app.py")},
    )
    store.record_tool_call(
        session_id=two.id, harness="claude", tool="Read", input={"file_path": "src/app.py"}
    )
    assert _daemon_pass()["conflicts"] == []  # a read is no write
    store.record_tool_call(
        session_id=two.id, harness="claude", tool="Edit", input={"file_path": "./src//app.py"}
    )
    [acted] = _daemon_pass()["conflicts"]
    assert acted["paths"] == ["src/app.py"] and acted["paused"] == two.id

    three = _start_writer(store, repo, "third", "--no-worktree")
    four = _start_writer(store, repo, "fourth", "--no-worktree")
    assert three.worktree_path is None and four.worktree_path is None
    [shared] = _daemon_pass()["conflicts"]
    assert shared["paths"] == ["shared.txt"]
    assert shared["sessions"] == sorted((three.id, four.id))


def test_one_incident_once_in_the_store(store: Store) -> None:
    """The conditional insert: of two daemons recording the same incident, one acts."""
    row = store.open_conflict("/repo", "a.txt", ("s2", "s1"), "escalate", "why")
    assert row is not None and (row["first_session"], row["second_session"]) == ("s1", "s2")
    assert store.open_conflict("/repo", "a.txt", ("s1", "s2"), "merge", "again") is None
    assert store.open_conflict("/repo", "b.txt", ("s1", "s2"), "escalate", "why") is not None
    assert store.settle_conflict(row["id"], "paused", paused="s2", kept="s1")
    assert not store.settle_conflict(row["id"], "paused", expect=("open",))  # moved already
    assert store.known_conflicts("/repo") == {("a.txt", "s1", "s2"), ("b.txt", "s1", "s2")}


@pytest.mark.policy_only
def test_paths_are_compared_repository_relative(tmp_path: Path) -> None:
    from ecc.sessions.conflicts import normalise

    worktree, repo = str(tmp_path / "wt"), str(tmp_path / "repo")
    sub = os.path.join(repo, "pkg")
    roots = [worktree, repo]
    assert normalise(f"{worktree}/src/../src/a.py", roots, worktree) == "src/a.py"
    assert normalise("./a.py", roots, sub) == "pkg/a.py"  # from the harness's directory
    assert normalise("a.py", roots, worktree) == "a.py"
    assert normalise("../../elsewhere/a.py", roots, worktree) is None  # outside the repository
    assert normalise("/etc/passwd", roots, worktree) is None
    assert normalise(repo, roots, worktree) is None  # the repository itself is no file
    assert normalise("", roots, worktree) is None
    assert normalise("a\0b", roots, worktree) is None
    assert normalise("d/" * 2100 + "a.py", roots, worktree) is None  # longer than any path


@pytest.mark.policy_only
def test_a_paused_agent_is_told_why_when_it_runs_again(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    """An agent with a conversation (a fake ``claude`` on PATH) continues it when resumed,
    told which file it shared with whom and what became of that session."""
    from tests.sessions.fake_agent import FakeAgent

    gate = tmp_path / "gate"
    agent = FakeAgent(tmp_path, gate=gate)
    ids = []
    for task in ("write the parser", "fix the parser"):
        started = run_ecc(
            "start", "--harness", "claude", task, "--json", cwd=git_repo, env=agent.env
        )
        assert started.returncode == 0, started.stderr
        ids.append(json.loads(started.stdout)["id"])
        wait_until(lambda i=ids[-1]: (s := store.get_session(i)) and s.harness_session_id)
    first, second = ids
    for session_id in ids:  # the hook records each Write as it is made, the first one first
        store.record_tool_call(
            session_id=session_id, harness="claude", tool="Write",
            input={"file_path": "src/parser.py", "content": "..."},
        )  # fmt: skip
    pass_ = run_ecc("daemon", "--once", "--json", cwd=Path(os.environ["HOME"]), env=agent.env)
    assert json.loads(pass_.stdout)["conflicts"][0]["paused"] == second
    paused = wait_state(store, second, "stopped")
    conversation = paused.harness_session_id

    assert run_ecc("stop", first).returncode == 0
    assert run_ecc("rm", first).returncode == 0  # it wrote nothing: its worktree goes
    gate.write_text("go")
    pass_ = run_ecc("daemon", "--once", "--json", cwd=Path(os.environ["HOME"]), env=agent.env)
    [resumed] = json.loads(pass_.stdout)["conflicts"]
    assert resumed["action"] == "resumed"
    final = wait_state(store, second, "completed", "failed")
    assert final.state.value == "completed" and final.run_kind == "followup", final.reason
    told = agent.calls()[-1]
    assert told["resume"] == conversation  # the same conversation, continued
    assert told["prompt"].startswith(
        f"ecc paused you because session {first} changed the same file(s) as you: "
        f"src/parser.py. Since then session {first} was removed."
    )


@pytest.mark.policy_only
def test_three_writers_pause_two_for_the_first(git_repo: Path, store: Store) -> None:
    """Of three sessions writing one file, the first keeps running; the two others are paused
    for it, and the pair of paused ones waits until they run again."""
    repo = _repo_with_shared(git_repo)
    first = _start_writer(store, repo, "first")
    second = _start_writer(store, repo, "second")
    third = _start_writer(store, repo, "third")
    acted = _daemon_pass()["conflicts"]
    assert sorted((a["paused"], a["kept"]) for a in acted) == sorted(
        [(second.id, first.id), (third.id, first.id)]
    )
    for session in (second, third):
        wait_state(store, session.id, "stopped")
    assert {row["status"] for row in ecc_json("conflicts")} == {"paused"}
    assert store.get_session(first.id).state.value == "running"

    (Path(third.worktree_path) / "shared.txt").write_text("base\n")  # nothing left of it
    assert run_ecc("rm", third.id).returncode == 0  # the paused session itself goes
    [closed] = _daemon_pass()["conflicts"]
    assert closed == {"id": third.id, "action": "closed: the paused session was removed"}
    statuses = {row["paused_session"]: row["status"] for row in ecc_json("conflicts", "--all")}
    assert statuses == {second.id: "paused", third.id: "dismissed"}
