"""The dashboard's incremental store reads and its cell formatting (no Textual involved)."""

from __future__ import annotations

from ecc.runtime.config.model import get_config
from ecc.store.models import State, now_iso
from ecc.store.open import open_store
from ecc.tui import data, panes


def test_an_unchanged_store_costs_one_pragma_and_changes_are_found(store, sessions):
    watcher = data.SessionWatcher(store)
    first = sessions.create("echo one")
    initial = watcher.poll()
    assert initial.reloaded and first.id in initial.changed
    reads = watcher.reads
    for _ in range(5):
        assert not watcher.poll()
    assert watcher.reads == reads  # nothing else was read

    other = open_store()  # another process's connection: what a runner does
    try:
        other.transition(first.id, State.STOPPED, "stopped on request")
        second = sessions.create("echo two")  # our own connection: not seen by data_version...
        other.update_session(first.id, name="renamed")  # ...until another connection commits
    finally:
        other.close()
    changes = watcher.poll()
    assert changes.changed == {first.id, second.id}
    assert not changes.reloaded  # found through the updated_at watermark, not a full reload
    assert watcher.sessions[first.id].state == State.STOPPED
    assert watcher.sessions[first.id].name == "renamed"


def test_a_deleted_session_is_noticed(store, sessions):
    keep = sessions.create("echo keep")
    gone = sessions.create("echo gone")
    watcher = data.SessionWatcher(store)
    watcher.poll()
    other = open_store()
    try:
        other.transition(gone.id, State.STOPPED, "stopped on request")
        other.delete_session(gone.id)
    finally:
        other.close()
    changes = watcher.poll()
    assert changes.removed == {gone.id}
    assert set(watcher.sessions) == {keep.id}


def test_output_follower_is_bounded_and_incremental(store, sessions):
    session = sessions.create("echo flood")
    stamp = now_iso()
    store.append_output(session.id, [(n, "stdout", stamp, f"line {n}") for n in range(1, 5001)])
    follower = data.OutputFollower(capacity=300)
    follower.select(session.id)
    reset, rows = follower.poll(store)
    assert reset
    assert [r["line"] for r in rows] == [f"line {n}" for n in range(4701, 5001)]
    assert follower.poll(store) == (False, [])
    store.append_output(session.id, [(n, "stderr", stamp, f"late {n}") for n in range(5001, 5011)])
    reset, rows = follower.poll(store)
    assert not reset
    assert [r["seq"] for r in rows] == list(range(5001, 5011))
    assert data.output_line(rows[0]) == "! late 5001"


def test_risk_summary_follows_new_tool_calls(store, sessions):
    session = sessions.create("echo risky")
    watcher = data.SessionWatcher(store)
    watcher.poll()
    assert watcher.risk == {}
    other = open_store()
    try:
        other.record_tool_call(
            session_id=session.id,
            harness="shell",
            tool="Bash",
            input={"command": "rm -rf /"},
            score=0.95,
            action="block",
            reasons=["destructive"],
            decision="deny",
        )
    finally:
        other.close()
    changes = watcher.poll()
    assert changes.risk_changed == {session.id}
    summary = watcher.risk[session.id]
    assert (summary["calls"], summary["denied"], summary["max_score"]) == (1, 1, 0.95)
    cell = data.risk_flags(summary, get_config().risk)
    assert cell.plain == "0.95 · 1 call ✖1"
    assert "red" in str(cell.spans[0].style)


def test_filter_terms_and_states(store, sessions):
    alpha = sessions.create("build alpha")
    beta = sessions.create("build beta")
    store.transition(beta.id, State.STOPPED, "stopped on request")
    watcher = data.SessionWatcher(store)
    watcher.poll()
    assert [s.id for s in watcher.ordered("alpha")] == [alpha.id]
    assert [s.id for s in watcher.ordered("build state:stopped")] == [beta.id]
    assert {s.id for s in watcher.ordered("")} == {alpha.id, beta.id}


def test_agent_text_is_inert_in_every_cell(store, sessions):
    hostile = "[bold red]boom[/] \x1b]0;title\x07\x1b[2Jgone \u202eevil"
    session = sessions.create(hostile)
    store.update_session(session.id, name="[link=http://x]n[/link]")
    current = store.get_session(session.id)
    cells = data.row_cells(current, None, get_config(), data.wall_clock())
    task = cells["task"].plain
    assert task.startswith("[link=http://x]n[/link]: [bold red]boom[/]")
    assert "\x1b" not in task and "\u202e" not in task and "\x07" not in task
    details = panes.details_text(current).plain
    assert "[bold red]boom[/]" in details and "\x1b" not in details
    line = data.output_line({"line": hostile, "stream": "stdout"})
    assert line == "[bold red]boom[/] gone evil"


def test_status_bar_counts_and_budget_use(store, sessions):
    config = get_config()
    config.token_budget = 1000
    config.cost_budget_usd = 2.0
    first = sessions.create("a")
    second = sessions.create("b")
    store.add_usage(first.id, 400, 400, 1.9)
    store.transition(second.id, State.FAILED, "exit 1")
    text = data.status_text(store.list_sessions(), config, query="a", shown=1).plain
    assert "2 sessions" in text
    assert "1 pending" in text and "1 failed" in text
    assert "tokens 800 / 1.0k (80%, alert75)" in text
    assert "cost $1.90 / $2.00 (95%, alert90)" in text
    assert "filter: a (1 shown)" in text


def test_session_cells_are_coloured_by_the_session_budget(store, sessions):
    config = get_config()
    config.session_cost_budget_usd = 1.0
    session = sessions.create("spend")
    store.add_usage(session.id, 10, 10, 1.5)
    cells = data.row_cells(store.get_session(session.id), None, config, data.wall_clock())
    assert cells["cost"].plain == "$1.50"
    assert cells["cost"].style == "bold white on red"  # over its own budget
    assert cells["tokens"].style == ""  # no token budget configured


def test_details_show_enforcement_and_the_pull_request() -> None:
    from ecc.store.models import Session, State
    from ecc.tui.panes import details_text

    session = Session(
        id="abc", task="t", harness="claude", state=State.COMPLETED, enforced=True,
        pr_url="https://github.com/acme/app/pull/7",
    )  # fmt: skip
    text = details_text(session).plain
    assert "Enforced:  yes (ecc's hook, risk.enforce)" in text
    assert "PR:        https://github.com/acme/app/pull/7" in text
    session.enforced = None
    assert "Enforced:  -" in details_text(session).plain


def test_a_session_in_an_open_conflict_is_marked(store, sessions):
    kept = sessions.create("first")
    paused = sessions.create("second")
    store.transition(paused.id, State.STOPPED, "stopped: conflict")
    row = store.open_conflict("/repo", "a.txt", (kept.id, paused.id), "escalate", "why")
    store.settle_conflict(row["id"], "paused", paused=paused.id, kept=kept.id)
    current = store.get_session(paused.id)
    cells = data.row_cells(current, None, get_config(), data.wall_clock())
    assert cells["state"].plain == "stopped!"
    assert f"Conflict:  {row['id']}: same file" in panes.details_text(current).plain
    store.settle_conflict(row["id"], "dismissed")
    after = store.get_session(paused.id)
    assert data.row_cells(after, None, get_config(), data.wall_clock())["state"].plain == "stopped"
    assert "Conflict:" not in panes.details_text(after).plain


def test_children_follow_their_parent_indented(store, sessions):
    parent = sessions.create("plan the release")
    child = sessions.create("write the notes")
    other = sessions.create("unrelated")
    store.update_session(child.id, parent_id=parent.id)
    watcher = data.SessionWatcher(store)
    watcher.poll()
    # a child right after its parent, one level down (the roots keep the newest-first order,
    # which sessions created in one millisecond may tie)
    order = [s.id for s in watcher.ordered()]
    assert sorted(order) == sorted([other.id, parent.id, child.id])
    assert order.index(child.id) == order.index(parent.id) + 1
    assert watcher.depths == {other.id: 0, parent.id: 0, child.id: 1}
    current = store.get_session(child.id)
    cells = data.row_cells(current, None, get_config(), data.wall_clock(), depth=1)
    assert cells["task"].plain == "└─ write the notes"
    assert [s.id for s in watcher.ordered("notes")] == [child.id]  # its parent filtered out
