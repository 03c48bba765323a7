"""Budgets: meter states, usage accounting, alerts once per level, the stop action, the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from ecc.observability import budgets
from ecc.runtime.config.model import Config
from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.open import default_path, open_store
from tests.conftest import run_ecc

DEFAULT = Config().budget_alert_thresholds


@pytest.fixture
def store() -> Iterator[Store]:
    with open_store(default_path()) as opened:
        yield opened


def add_session(store: Store, session_id: str, state: State = State.RUNNING, **fields: object):
    return store.insert_session(
        session_id,
        task="t",
        harness="shell",
        state=state,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
        **fields,
    )


@pytest.mark.parametrize(
    ("used", "limit", "state"),
    [
        (0, 0, "unconfigured"),
        (10, 100, "normal"),
        (50, 100, "alert50"),
        (75, 100, "alert75"),
        (90, 100, "alert90"),
        (100, 100, "over_budget"),
        (150, 100, "over_budget"),
    ],
)
def test_meter_states_follow_the_reference(used: int, limit: int, state: str) -> None:
    meter = budgets.meter(used, limit, DEFAULT)
    assert budgets.label(meter.level, DEFAULT) == state


def test_labels_use_the_configured_fractions() -> None:
    thresholds = SimpleNamespace(advisory=0.4, warning=0.6, critical=0.875)
    assert budgets.label(budgets.meter(41, 100, thresholds).level, thresholds) == "alert40"
    assert budgets.label(budgets.meter(88, 100, thresholds).level, thresholds) == "alert88"


def test_cumulative_usage_is_not_counted_twice(store: Store) -> None:
    add_session(store, "s1")
    # Codex reports the thread's running total each turn
    assert budgets.record_usage(
        store, "s1", {"input_tokens": 100, "output_tokens": 10, "cumulative": True}
    )
    assert budgets.record_usage(
        store, "s1", {"input_tokens": 250, "output_tokens": 30, "cumulative": True}
    )
    assert not budgets.record_usage(
        store, "s1", {"input_tokens": 250, "output_tokens": 30, "cumulative": True}
    )
    session = store.get_session("s1")
    assert (session.input_tokens, session.output_tokens) == (250, 30)
    # Claude, Gemini and OpenCode report increments
    budgets.record_usage(store, "s1", {"input_tokens": 5, "output_tokens": 5, "cost_usd": 0.25})
    budgets.record_usage(store, "s1", {"input_tokens": 5, "output_tokens": 5, "cost_usd": 0.25})
    session = store.get_session("s1")
    assert (session.input_tokens, session.output_tokens, session.cost_usd) == (260, 40, 0.5)


def notifications(store: Store) -> list[dict]:
    return [n for n in store.list_notifications() if n["event"] == "budget_alert"]


def test_overall_alerts_fire_once_per_rising_level(store: Store) -> None:
    config = Config(token_budget=1000)
    add_session(store, "s1")
    store.add_usage("s1", 400, 0)
    assert budgets.check(store, config) == []
    store.add_usage("s1", 100, 0)  # 50%
    assert [d["action"] for d in budgets.check(store, config)] == ["alert: alert50"]
    assert budgets.check(store, config) == []  # same level: no repeat (another process neither)
    store.add_usage("s1", 300, 0)  # 80%
    budgets.check(store, config)
    (first, second) = notifications(store)
    assert "Budget alert 50%" in first["body"] and "tokens 500 / 1,000" in first["body"]
    assert "Budget alert 75%" in second["body"]
    assert second["data"]["scope"] == "overall" and second["data"]["state"] == "alert75"


def test_per_session_budget_with_stop_action(store: Store) -> None:
    config = Config(session_token_budget=100, budget_action="stop")
    add_session(store, "s1")
    add_session(store, "s2")
    store.add_usage("s1", 120, 0)
    store.add_usage("s2", 10, 0)
    done = budgets.check(store, config)
    assert {"id": "s1", "action": "stop requested (budget exceeded)"} in done
    assert store.get_session("s1").stop_requested is True
    assert store.get_session("s2").stop_requested is False
    (alert,) = notifications(store)
    assert alert["session_id"] == "s1" and alert["title"].startswith("ecc: budget exceeded")
    assert alert["data"]["action"] == "stop"
    assert "budget_stop" in [e["kind"] for e in store.list_events("s1")]


def test_notify_action_never_stops(store: Store) -> None:
    config = Config(cost_budget_usd=1.0)
    add_session(store, "s1")
    store.add_usage("s1", 0, 0, 2.0)
    budgets.check(store, config)
    assert store.get_session("s1").stop_requested is False
    assert notifications(store)[0]["data"]["state"] == "over_budget"


def test_overall_limit_with_stop_stops_every_active_session(store: Store) -> None:
    config = Config(token_budget=100, budget_action="stop")
    add_session(store, "done", State.COMPLETED)
    add_session(store, "live")
    store.add_usage("done", 100, 0)  # all-time totals count finished sessions too
    budgets.check(store, config)
    assert store.get_session("live").stop_requested is True
    assert store.get_session("done").stop_requested is False


def test_a_profile_budget_overrides_the_config(store: Store) -> None:
    config = Config(session_token_budget=1000, budget_action="stop")
    add_session(store, "s1", profile_json=json.dumps({"token_budget": 50}))
    store.add_usage("s1", 60, 0)
    budgets.check(store, config, session_id="s1")
    assert store.get_session("s1").stop_requested is True


def test_budget_cli_shows_without_alerting(store: Store) -> None:
    add_session(store, "s1")
    store.add_usage("s1", 950, 50, 1.5)
    done = run_ecc("-c", "token_budget=1000", "-c", "session_cost_budget_usd=2", "budget", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["overall"]["state"] == "over_budget"
    assert data["overall"]["tokens"] == {
        "used": 1000,
        "limit": 1000,
        "fraction": 1.0,
        "state": "over_budget",
    }
    (row,) = data["sessions"]
    assert row["id"] == "s1" and row["budget_state"] == "alert75"
    text = run_ecc("budget")
    assert "overall" in text.stdout and "no budget" in text.stdout
    assert notifications(store) == []  # listing never alerts or stops
    assert store.get_session("s1").stop_requested is False


def test_runner_usage_events_go_through_budgets(store: Store, isolated_env) -> None:
    from ecc.contract.types import OutputEvent
    from ecc.sessions.parsing import apply_output_event

    config_file = isolated_env / ".config/ecc/config.toml"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text('session_token_budget = 200\nbudget_action = "stop"\n')
    session = add_session(store, "s1")
    for total in (100, 150, 150):  # cumulative totals, as Codex reports them
        event = OutputEvent("usage", {"input_tokens": total, "cumulative": True})
        apply_output_event(store, session, event)
    assert store.get_session("s1").input_tokens == 150
    assert store.get_session("s1").stop_requested is False
    apply_output_event(
        store, session, OutputEvent("usage", {"input_tokens": 300, "cumulative": True})
    )
    assert store.get_session("s1").stop_requested is True
    assert notifications(store)[-1]["data"]["state"] == "over_budget"


def test_daemon_pass_runs_the_budget_step(store: Store) -> None:
    from ecc.sessions.daemon import Daemon

    config = Config(token_budget=10)
    add_session(store, "s1", State.COMPLETED)
    store.add_usage("s1", 20, 0)
    report = Daemon(store, config, interval=1.0).run_pass()
    assert report["budgets"] == [{"id": None, "action": "alert: over_budget"}]
    assert Daemon(store, config, interval=1.0).run_pass()["budgets"] == []  # once per level


def test_a_parents_budget_covers_its_children(store: Store) -> None:
    """Children's usage counts against the parent's limit; the runner's check of a child stops
    the parent over it and every active session below it, not the unrelated one."""
    config = Config(session_token_budget=100, budget_action="stop")
    add_session(store, "parent")
    add_session(store, "child", parent_id="parent")
    add_session(store, "grandchild", parent_id="child")
    add_session(store, "sibling-done", State.COMPLETED, parent_id="parent")
    add_session(store, "stranger")
    store.add_usage("parent", 30, 0)
    store.add_usage("child", 30, 0)
    store.add_usage("grandchild", 50, 0)  # each under 100 alone; the family is at 110
    store.add_usage("stranger", 50, 0)
    row = budgets.for_session(store.get_session("parent"), config, budgets.family(store, "parent"))
    assert row["tokens"]["used"] == 110 and row["budget_state"] == "over_budget"
    assert budgets.for_session(store.get_session("parent"), config)["tokens"]["used"] == 30

    done = budgets.check(store, config, session_id="grandchild")
    stopped = {entry["id"] for entry in done if entry["action"].startswith("stop")}
    assert stopped == {"parent", "child", "grandchild"}
    assert store.get_session("stranger").stop_requested is False
    reasons = [e["reason"] for e in store.list_events("grandchild") if e["kind"] == "budget_stop"]
    assert reasons == ["session token budget exceeded (110 of 100 tokens): stop requested"]
