"""The store and the one transition table, on a real SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ecc.contract.errors import EccError
from ecc.store.base import Store, StoreError
from ecc.store.models import TRANSITIONS, InvalidTransition, State, check_transition
from ecc.store.open import open_store, resolve_url
from ecc.store.postgres import PostgresStore
from ecc.store.schema import SCHEMA_VERSION
from ecc.store.sqlite import SqliteStore


def _new(store: Store, sid: str = "s1", **fields: object) -> None:
    store.insert_session(
        sid,
        task="t",
        harness="shell",
        state=State.PENDING,
        reason="created",
        project_dir="/tmp",
        working_dir="/tmp",
        **fields,
    )


def test_wal_and_user_version(tmp_path: Path) -> None:
    db = tmp_path / "x" / "ecc.db"
    SqliteStore(db).close()
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert (db.stat().st_mode & 0o777) == 0o600
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="newer"):
        SqliteStore(db)


def test_reopen_performs_no_writes(tmp_path: Path) -> None:
    db = tmp_path / "ecc.db"
    SqliteStore(db).close()
    before = db.read_bytes()
    reopened = SqliteStore(db)
    assert not (tmp_path / "ecc.db-wal").exists() or not (tmp_path / "ecc.db-wal").stat().st_size
    reopened.close()
    assert db.read_bytes() == before


def test_transition_table_checked_and_recorded(store: Store) -> None:
    _new(store)
    store.transition("s1", State.RUNNING, "spawned")
    store.transition("s1", State.COMPLETED, "exit 0", exit_code=0)
    with pytest.raises(InvalidTransition, match="completed -> running"):
        store.transition("s1", State.RUNNING, "again")
    events = store.list_events("s1")
    assert [(e["from_state"], e["to_state"], e["reason"]) for e in events] == [
        (None, "pending", "created"),
        ("pending", "running", "spawned"),
        ("running", "completed", "exit 0"),
    ]
    assert store.get_session("s1").ended_at  # type: ignore[union-attr]


def test_every_state_has_a_row_and_terminal_exits_are_explicit() -> None:
    assert set(TRANSITIONS) == set(State)
    check_transition(State.STOPPED, State.PENDING)
    for dst in State:
        if dst != State.PENDING:
            with pytest.raises(InvalidTransition):
                check_transition(State.FAILED, dst)


def test_runner_claim_is_at_most_once(store: Store) -> None:
    _new(store)
    assert store.claim_runner("s1", 100, "h", "t")
    assert not store.claim_runner("s1", 200, "h", "t")
    assert store.release_runner("s1", 100)
    assert store.claim_runner("s1", 200, "h", "t")
    assert store.get_session("s1").attempts == 2  # type: ignore[union-attr]


def test_slots_respect_both_limits(store: Store) -> None:
    for i in range(3):
        _new(store, f"w{i}", use_worktree=1)
    _new(store, "plain")
    assert store.claim_slot("w0", 2, 3)
    assert store.claim_slot("w1", 2, 3)
    assert not store.claim_slot("w2", 2, 3)  # worktree limit
    assert store.claim_slot("plain", 2, 3)  # a session without a worktree still fits
    store.transition("w0", State.FAILED, "boom")  # terminal releases the slot
    assert store.claim_slot("w2", 2, 4)


def test_prefix_lookup_escapes_like_wildcards(store: Store) -> None:
    _new(store, "ab_1")
    _new(store, "abx1")
    assert [r["id"] for r in store.ids_with_prefix("ab_")] == ["ab_1"]


def test_tool_calls_notifications_usage(store: Store) -> None:
    _new(store)
    first = store.record_tool_call(
        session_id="s1",
        harness="shell",
        tool="Bash",
        input={"command": "ls"},
        score=0.4,
        action="review",
        reasons=["shell"],
    )
    store.record_tool_call(session_id="ghost", harness="shell", tool="Read", input="x")
    calls = store.list_tool_calls("s1")
    assert [c["id"] for c in calls] == [first]
    assert calls[0]["reasons"] == ["shell"] and calls[0]["score"] == 0.4
    assert store.list_tool_calls(None)[1]["session_id"] is None  # unknown id -> unattached
    assert store.add_usage("s1", 10, 5, 0.25)
    assert store.add_usage("s1", 1, 1, 0.5)
    assert not store.add_usage("nope", 1, 1, 1.0)
    session = store.get_session("s1")
    assert (session.input_tokens, session.output_tokens, session.cost_usd) == (11, 6, 0.75)  # type: ignore[union-attr]
    nid = store.record_notification(
        event="session_failed", session_id="s1", title="t", body="b", data={"k": 1}
    )
    assert store.list_notifications()[-1]["id"] == nid


def test_delete_refuses_active(store: Store) -> None:
    _new(store)
    with pytest.raises(EccError, match="stop it first"):
        store.delete_session("s1")
    store.transition("s1", State.STOPPED, "x")
    store.append_output("s1", [(1, "stdout", "t", "l")])
    store.delete_session("s1")
    assert store.get_session("s1") is None and store.count_output("s1") == 0


def test_store_url() -> None:
    assert resolve_url("sqlite:///tmp/a.db") == Path("/tmp/a.db")
    assert resolve_url("postgresql://x/y") == "postgresql://x/y"
    with pytest.raises(StoreError, match="unsupported store url 'mysql://u:\\*\\*\\*@h/d'"):
        resolve_url("mysql://u:secret@h/d")


def test_store_dialects_differ_only_in_plumbing(store: Store, store_kind: str) -> None:
    """The same calls give the same answers on both stores (sums are plain numbers)."""
    assert store.dialect == store_kind
    _new(store, "s1")
    _new(store, "s2")
    assert store.latest_session().id == "s2"  # type: ignore[union-attr]
    assert store.add_usage("s1", 10, 5, 0.25) and store.add_usage("s1", 1, 1, 0.5)
    totals = store.usage_totals()
    assert totals == {"sessions": 2, "input_tokens": 11, "output_tokens": 6, "cost_usd": 0.75}
    assert type(totals["input_tokens"]) is int
    assert sorted(row["id"] for row in store.ids_with_prefix("s")) == ["s1", "s2"]
    assert store.ids_with_prefix("%") == []  # LIKE wildcards in a prefix are literal
    assert store.claim_slot("s1", 1, 1) and not store.claim_slot("s2", 1, 1)
    before = store.change_counter()
    other = store.reopen()
    other.heartbeat("s2")
    other.close()
    assert store.change_counter() != before


def test_open_store_chooses_the_dialect_by_url(store: Store, store_kind: str, tmp_path: Path):
    dialect = PostgresStore if store_kind == "postgresql" else SqliteStore
    for again in (store.reopen(), open_store(store.url)):
        assert type(again) is dialect
        again.close()
    assert type(store) is dialect
    by_url = open_store(f"sqlite://{tmp_path}/named.db")
    assert isinstance(by_url, SqliteStore) and by_url.path == tmp_path / "named.db"
    by_url.close()


def test_a_sqlite_store_never_imports_the_postgresql_dialect(tmp_path: Path) -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from ecc.store.open import open_store\n"
        "open_store(sys.argv[1]).close()\n"
        "print([m for m in ('psycopg', 'ecc.store.postgres') if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "ecc.db")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
