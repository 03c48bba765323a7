"""One row per tool call: a hooked call and the same call parsed from the output merge.

Runs on SQLite and PostgreSQL (the sessions conftest's ``store`` fixture). The merge key is the
harness's call id when both sides carry it, else the session, tool and input of the latest row
only the other side recorded; the hook's score, action and decision win (it decided the call).
"""

from __future__ import annotations

import threading

from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.open import open_store
from tests.sessions.conftest import store_target

LS = {"command": "ls -la"}


def _session(store: Store, sid: str = "s1") -> str:
    store.insert_session(
        sid,
        task="t",
        harness="claude",
        state=State.RUNNING,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )
    return sid


def _hook(
    store: Store, sid: str | None, call_id: str | None, data: object = LS, **kw: object
) -> int:
    values = {"score": 0.2, "action": "allow", "reasons": ["shell"], "decision": "allow", **kw}
    return store.record_tool_call(
        session_id=sid,
        harness="claude",
        tool="Bash",
        input=data,
        call_id=call_id,
        source="hook",
        **values,  # type: ignore[arg-type]
    )


def _output(store: Store, sid: str | None, call_id: str | None, data: object = LS) -> int:
    return store.record_tool_call(
        session_id=sid,
        harness="claude",
        tool="Bash",
        input=data,
        score=0.25,
        action="allow",
        reasons=["from output"],
        decision="observed",
        call_id=call_id,
        source="output",
    )


def test_hook_then_output_with_the_same_id_is_one_row(store: Store) -> None:
    sid = _session(store)
    _hook(store, sid, "toolu_1", decision="deny", score=0.9, action="block")
    _output(store, sid, "toolu_1")
    (row,) = store.list_tool_calls(sid)
    assert (row["source"], row["call_id"], row["decision"]) == ("both", "toolu_1", "deny")
    assert (row["score"], row["action"], row["reasons"]) == (0.9, "block", ["shell"])


def test_output_then_hook_with_the_same_id_is_one_row_with_the_hooks_decision(
    store: Store,
) -> None:
    sid = _session(store)
    first = _output(store, sid, "toolu_1")
    before = store.list_tool_calls(sid)[0]
    merged = _hook(store, sid, "toolu_1", decision="ask", score=0.65, action="require_confirmation")
    (row,) = store.list_tool_calls(sid)
    assert (row["source"], row["decision"], row["score"]) == ("both", "ask", 0.65)
    assert row["created_at"] == before["created_at"]  # first seen, kept
    assert merged > first  # a merge is a new highest id: watchers following it see the change


def test_without_ids_the_latest_unmatched_row_of_the_same_tool_and_input_merges(
    store: Store,
) -> None:
    sid = _session(store)
    _hook(store, sid, None)  # e.g. Gemini CLI's hook payload carries no call id
    _output(store, sid, "tool_7")
    _output(store, sid, "tool_8")  # the same command again: the hook row is taken already
    _hook(store, sid, None)
    rows = store.list_tool_calls(sid)
    assert [r["source"] for r in rows] == ["both", "both"]
    assert {r["call_id"] for r in rows} == {"tool_7", "tool_8"}


def test_ids_of_different_namespaces_still_merge_on_tool_and_input(store: Store) -> None:
    sid = _session(store)
    _hook(store, sid, "call_abc")  # codex: the model's call id in the hook, item_N in the output
    _output(store, sid, "item_1")
    (row,) = store.list_tool_calls(sid)
    assert row["source"] == "both" and row["decision"] == "allow"


def test_different_calls_stay_apart(store: Store) -> None:
    sid = _session(store)
    other = _session(store, "s2")
    _hook(store, sid, "toolu_1")
    _output(store, sid, "toolu_2", {"command": "pwd"})  # another input, another id
    _output(store, other, "toolu_1")  # the same id in another session
    _hook(store, None, "toolu_1")  # unattached calls never merge
    _hook(store, None, "toolu_1")
    assert [r["source"] for r in store.list_tool_calls(sid)] == ["hook", "output"]
    assert [r["source"] for r in store.list_tool_calls(other)] == ["output"]
    assert len([r for r in store.list_tool_calls(None) if r["session_id"] is None]) == 2


def test_an_output_line_seen_twice_is_still_one_row(store: Store) -> None:
    sid = _session(store)
    first = _output(store, sid, "toolu_1")
    assert _output(store, sid, "toolu_1") == first
    _hook(store, sid, "toolu_1")
    _output(store, sid, "toolu_1")
    (row,) = store.list_tool_calls(sid)
    assert row["source"] == "both"


def test_summary_and_count_see_one_call_each(store: Store) -> None:
    sid = _session(store)
    _output(store, sid, "a")
    _hook(store, sid, "a", decision="deny", score=0.95, action="block")
    _output(store, sid, "b", {"command": "pwd"})
    summary = store.tool_call_summary()[sid]
    assert (summary["calls"], summary["max_score"], summary["denied"]) == (2, 0.95, 1)


def test_concurrent_hook_and_output_writers_leave_one_row_per_call(store: Store) -> None:
    sid = _session(store)
    ids = [f"toolu_{n}" for n in range(25)]

    def writer(record: object, order: list[str]) -> None:
        own = open_store(store_target())
        try:
            for call_id in order:
                record(own, sid, call_id, {"command": f"echo {call_id}"})  # type: ignore[operator]
        finally:
            own.close()

    threads = [
        threading.Thread(target=writer, args=(_hook, ids)),
        threading.Thread(target=writer, args=(_output, list(reversed(ids)))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    rows = store.list_tool_calls(sid)
    assert sorted(r["call_id"] for r in rows) == sorted(ids)
    assert {r["source"] for r in rows} == {"both"}
