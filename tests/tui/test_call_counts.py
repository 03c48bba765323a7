"""The sessions table's risk cell counts every recorded call, hooked or seen in the output."""

from __future__ import annotations

from ecc.runtime.config.model import get_config
from ecc.store.open import open_store
from ecc.tui import data


def _call(store, session_id: str, command: str, **fields) -> None:
    values = {"score": None, "action": None, "decision": "observed", "source": "output", **fields}
    store.record_tool_call(
        session_id=session_id, harness="claude", tool="Bash", input={"command": command}, **values
    )


def test_calls_seen_only_in_the_output_are_counted_with_their_highest_score(store, sessions):
    session = sessions.create("echo hi")
    watcher = data.SessionWatcher(store)
    watcher.poll()
    other = open_store()
    try:
        _call(other, session.id, "ls", score=0.2, action="allow", call_id="a")
        _call(other, session.id, "git push --force", score=0.7, action="require_confirmation")
    finally:
        other.close()
    assert watcher.poll().risk_changed == {session.id}
    cell = data.risk_flags(watcher.risk[session.id], get_config().risk)
    assert cell.plain == "0.70 · 2 calls"


def test_unscored_calls_are_counted_not_shown_as_none(store, sessions):
    session = sessions.create("echo hi")
    _call(store, session.id, "ls")  # recorded before output calls were scored
    watcher = data.SessionWatcher(store)
    watcher.poll()
    assert data.risk_flags(watcher.risk[session.id], get_config().risk).plain == "1 call"


def test_a_hook_decision_merged_into_an_output_row_reaches_the_dashboard(store, sessions):
    session = sessions.create("echo hi")
    _call(store, session.id, "rm -rf /", score=1.0, action="block", call_id="toolu_1")
    watcher = data.SessionWatcher(store)
    watcher.poll()
    assert watcher.risk[session.id]["denied"] == 0
    other = open_store()  # the hook's own connection: the watcher sees others' writes
    try:
        _call(other, session.id, "rm -rf /", score=1.0, action="block", decision="deny",
              source="hook", call_id="toolu_1")  # fmt: skip
    finally:
        other.close()
    assert watcher.poll().risk_changed == {session.id}
    summary = watcher.risk[session.id]
    assert (summary["calls"], summary["denied"]) == (1, 1)
    assert data.risk_flags(summary, get_config().risk).plain == "1.00 · 1 call ✖1"
