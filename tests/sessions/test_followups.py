"""``ecc send``: a follow-up continues the harness's own conversation in the same directory.

A fake ``claude`` on PATH (:mod:`tests.sessions.fake_agent`) records each run's argv, directory
and prompt and answers from the conversation it kept, so these tests see the follow-up run
resume the captured session with the message as its prompt, and the agent remember the turns.
"""

from __future__ import annotations

import json
from pathlib import Path

from ecc.store.base import Store
from tests.conftest import run_ecc
from tests.sessions.conftest import wait_state, wait_until
from tests.sessions.fake_agent import FakeAgent


def _turns(store: Store, session_id: str) -> list[tuple[int | None, str, str, str]]:
    return [(m["run"], m["role"], m["status"], m["text"]) for m in store.list_messages(session_id)]


def test_send_continues_the_conversation_in_the_same_worktree(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    agent = FakeAgent(tmp_path)
    first = run_ecc("run", "--harness", "claude", "write the parser", cwd=git_repo, env=agent.env)
    assert first.returncode == 0, first.stderr
    session = store.latest_session()
    assert session is not None and session.harness_session_id
    resume_id = session.harness_session_id

    sent = run_ecc("send", session.id[:6], "now add tests", "--json", env=agent.env)
    assert sent.returncode == 0, sent.stderr
    reply = json.loads(sent.stdout)
    assert reply["id"] == session.id and reply["message"]["status"] == "sent"
    final = wait_state(store, session.id, "completed", "failed")
    assert final.state.value == "completed", final.reason
    assert (final.run_kind, final.attempts) == ("followup", 2)

    calls = agent.calls()
    assert [c["prompt"] for c in calls] == ["write the parser", "now add tests"]
    assert calls[0]["resume"] is None and calls[1]["resume"] == resume_id
    assert calls[0]["cwd"] == calls[1]["cwd"] == session.worktree_path
    second_answer = "turn 2: now add tests (earlier: write the parser)"
    assert _turns(store, session.id) == [
        (1, "user", "sent", "write the parser"),
        (1, "agent", "received", "turn 1: write the parser (earlier: )"),
        (2, "user", "sent", "now add tests"),
        (2, "agent", "received", second_answer),
    ]

    status = json.loads(run_ecc("status", session.id, "--json").stdout)
    assert [(t["run"], t["role"], t["text"]) for t in status["conversation"]][2:] == [
        (2, "user", "now add tests"),
        (2, "agent", second_answer),
    ]
    text = run_ecc("status", session.id).stdout
    assert "Conversation:" in text and "you: now add tests" in text
    assert f"agent: {second_answer}" in text

    logs = run_ecc("logs", session.id).stdout.splitlines()
    headers = [line for line in logs if line.startswith("── run ")]
    assert headers == ["── run 1: write the parser", "── run 2 (follow-up): now add tests"]
    assert logs.index(headers[1]) > logs.index(headers[0]) + 1  # run 1's lines come first
    plain = run_ecc("logs", session.id, "--stream", "stdout").stdout.splitlines()
    assert not any(line.startswith("── run ") for line in plain)
    assert len(plain) == 4  # init + result of each run, nothing added


def test_a_message_to_a_running_session_waits_for_its_run_to_end(
    tmp_path: Path, store: Store
) -> None:
    gate = tmp_path / "gate"
    agent = FakeAgent(tmp_path, gate=gate)
    work = tmp_path / "work"
    work.mkdir()
    started = run_ecc(
        "start", "--harness", "claude", "--no-worktree", "long job", "--json", cwd=work,
        env=agent.env,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    sid = json.loads(started.stdout)["id"]
    wait_until(
        lambda: (s := store.get_session(sid)) and s.harness_session_id, what="the session id"
    )
    queued = run_ecc("send", sid, "then tidy up", env=agent.env)
    assert queued.returncode == 0, queued.stderr
    assert "queued" in queued.stdout
    assert _turns(store, sid)[-1] == (None, "user", "queued", "then tidy up")
    status = run_ecc("status", sid).stdout
    assert "you (queued): then tidy up" in status
    gate.write_text("go")
    wait_until(
        lambda: (s := store.get_session(sid)) and s.attempts == 2 and s.terminal,
        what="the follow-up run to end",
    )
    calls = agent.calls()
    assert [c["prompt"] for c in calls] == ["long job", "then tidy up"]
    assert calls[1]["resume"] == store.get_session(sid).harness_session_id  # type: ignore[union-attr]
    assert calls[0]["cwd"] == calls[1]["cwd"] == str(work.resolve())
    assert [t[:3] for t in _turns(store, sid)] == [
        (1, "user", "sent"),
        (1, "agent", "received"),
        (2, "user", "sent"),
        (2, "agent", "received"),
    ]


def test_send_refuses_what_it_cannot_deliver(tmp_path: Path, store: Store) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = run_ecc("run", "--harness", "shell", "--no-worktree", "echo hi", cwd=work)
    assert done.returncode == 0, done.stderr
    sid = store.latest_session().id  # type: ignore[union-attr]
    before = _turns(store, sid)

    no_conversation = run_ecc("send", sid, "and more")
    assert no_conversation.returncode == 1
    assert no_conversation.stderr.startswith("Error: ") and no_conversation.stderr.count("\n") == 1
    assert "no conversation to continue" in no_conversation.stderr

    store.update_session(sid, harness_session_id="abc")  # give it one: the text is checked first
    for message, why in (("", "must not be empty"), ("   \n", "must not be empty")):
        refused = run_ecc("send", sid, message)
        assert refused.returncode == 1 and why in refused.stderr, refused.stderr
    huge = run_ecc("send", sid, "-", input="x" * 70_000)
    assert huge.returncode == 1 and "at most 65536 bytes" in huge.stderr, huge.stderr
    assert run_ecc("send", "ffffffffffff", "hello").returncode == 1
    assert _turns(store, sid) == before  # nothing written by a refusal
    assert store.get_session(sid).attempts == 1  # type: ignore[union-attr]


def test_agent_answers_in_pieces_are_joined(store: Store) -> None:
    from ecc.contract.types import OutputEvent
    from ecc.sessions.parsing import apply_output_event
    from ecc.store.models import State

    session = store.insert_session(
        "s1", task="t", harness="gemini", state=State.RUNNING, reason="test",
        project_dir="/tmp", working_dir="/tmp", attempts=1,
    )  # fmt: skip
    for text, delta in (("Hel", True), ("lo", True), ("Second answer", False)):
        apply_output_event(store, session, OutputEvent("final", {"text": text, "delta": delta}))
    assert _turns(store, "s1") == [
        (1, "agent", "received", "Hello"),
        (1, "agent", "received", "Second answer"),
    ]
    assert [e["kind"] for e in store.list_events("s1")].count("output_final") == 3


def test_a_stop_holds_the_queue_and_the_next_send_delivers_it_in_order(
    tmp_path: Path, store: Store
) -> None:
    gate = tmp_path / "gate"
    agent = FakeAgent(tmp_path, gate=gate)
    work = tmp_path / "work"
    work.mkdir()
    started = run_ecc(
        "start", "--harness", "claude", "--no-worktree", "first", "--json", cwd=work,
        env=agent.env,
    )  # fmt: skip
    sid = json.loads(started.stdout)["id"]
    wait_until(
        lambda: (s := store.get_session(sid)) and s.harness_session_id, what="the session id"
    )
    assert run_ecc("send", sid, "second", env=agent.env).returncode == 0
    stopped = run_ecc("stop", sid, "--grace", "1", env=agent.env)
    assert stopped.returncode == 0, stopped.stderr
    assert store.get_session(sid).state.value == "stopped"  # type: ignore[union-attr]
    assert _turns(store, sid)[-1] == (None, "user", "queued", "second")  # held, not dropped
    assert [c["prompt"] for c in agent.calls()] == ["first"]

    gate.write_text("go")
    later = run_ecc("send", sid, "third", "--json", env=agent.env)
    assert later.returncode == 0, later.stderr
    assert json.loads(later.stdout)["message"]["status"] == "queued"  # behind "second"
    wait_until(
        lambda: (s := store.get_session(sid)) and s.attempts == 3 and s.terminal,
        what="both follow-ups to run",
    )
    assert [c["prompt"] for c in agent.calls()] == ["first", "second", "third"]
    assert [(t[0], t[1], t[3]) for t in _turns(store, sid) if t[1] == "user"] == [
        (1, "user", "first"),
        (2, "user", "second"),
        (3, "user", "third"),
    ]
