"""The ``approvals`` table on both dialects: create, decide once, expire, and the pending
approval every session read carries (what the views show as ``waiting``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.open import default_path, open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, isolated_env: Any) -> Iterator[Store]:
    if request.param == "sqlite":
        opened = open_store(default_path())
        yield opened
        opened.close()
        return
    server = request.getfixturevalue("postgres_server")
    url = server.new_schema()
    opened = open_store(url)
    try:
        yield opened
    finally:
        opened.close()
        server.drop_schema(url)


def running(store: Store, session_id: str = "5e5510a0b1c2") -> str:
    store.insert_session(
        session_id,
        task="t",
        harness="claude",
        state=State.RUNNING,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )
    return session_id


def create(store: Store, approval_id: str, session_id: str, timeout: float = 600) -> Any:
    return store.create_approval(
        approval_id,
        session_id=session_id,
        harness="claude",
        tool="Bash",
        input_excerpt="rm -rf node_modules",
        score=0.65,
        action="require_confirmation",
        reasons=["a", "b"],
        timeout_secs=timeout,
        on_timeout="deny",
    )


def test_create_decide_once_and_the_session_read_shows_it(store: Store) -> None:
    assert create(store, "a00000000001", "0000deadbeef") is None  # no such session
    session = running(store)
    before = store.get_session(session)
    assert before is not None and before.pending_approval is None
    row = create(store, "a00000000002", session)
    assert row["decision"] is None and row["reasons"] == ["a", "b"]
    assert row["expires_at"] > row["created_at"]
    waiting = store.get_session(session)
    assert waiting is not None and waiting.pending_approval == "a00000000002"
    assert waiting.display_state == "waiting" and waiting.state == State.RUNNING
    assert waiting.updated_at >= before.updated_at
    assert [s.pending_approval for s in store.list_sessions()] == ["a00000000002"]
    assert [s.id for s in store.sessions_updated_since(before.updated_at)] == [session]
    assert [a["id"] for a in store.list_approvals()] == ["a00000000002"]
    assert [a["id"] for a in store.approvals_with_prefix("a0000000000")] == ["a00000000002"]

    assert store.decide_approval("a00000000002", "allow", "alice", "ok")
    assert not store.decide_approval("a00000000002", "deny", "bob", "")  # decided once
    decided = store.get_approval("a00000000002")
    assert decided is not None
    assert [decided[k] for k in ("decision", "decided_by", "reason")] == ["allow", "alice", "ok"]
    assert decided["decided_at"] is not None
    after = store.get_session(session)
    assert after is not None and after.pending_approval is None
    assert after.display_state == "running"
    assert store.list_approvals() == []
    assert [a["id"] for a in store.list_approvals(pending=False)] == ["a00000000002"]


def test_overdue_approvals_get_their_timeout_decision(store: Store) -> None:
    session = running(store)
    create(store, "b00000000001", session, timeout=0)
    create(store, "b00000000002", session, timeout=600)
    assert store.list_approvals() == [store.get_approval("b00000000002")]  # overdue: not pending
    assert store.expire_approvals() == ["b00000000001"]
    assert store.expire_approvals() == []
    expired = store.get_approval("b00000000001")
    assert expired is not None
    assert (expired["decision"], expired["decided_by"]) == ("deny", "timeout")
    assert not store.decide_approval("b00000000001", "allow", "alice", "")


def test_a_finished_session_never_shows_waiting_and_its_approvals_outlive_it(store: Store) -> None:
    session = running(store)
    create(store, "c00000000001", session)
    store.transition(session, State.COMPLETED, "done")
    finished = store.get_session(session)
    assert finished is not None and finished.display_state == "completed"
    store.delete_session(session)
    kept = store.get_approval("c00000000001")
    assert kept is not None and kept["session_id"] is None
