"""``budget_action = "stop"``: a start over budget is refused with the figures before anything is
written (CLI, remote API, resume), ``notify`` still starts, and a running session whose usage
goes over its budget is stopped through the store's stop flag with the budget named."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ecc.observability import budgets
from ecc.runtime.config.model import Config
from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.open import default_path, open_store
from tests.conftest import run_ecc


@pytest.fixture
def store() -> Iterator[Store]:
    with open_store(default_path()) as opened:
        yield opened


def spent(store: Store, tokens: int = 0, cost: float = 0.0, session_id: str = "old") -> None:
    """A finished session that used ``tokens`` and ``cost`` (all-time totals count it)."""
    store.insert_session(
        session_id,
        task="earlier work",
        harness="shell",
        state=State.COMPLETED,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )
    store.add_usage(session_id, tokens, 0, cost)


def session_ids(store: Store) -> list[str]:
    return [s.id for s in store.list_sessions()]


# -- refusing a start --------------------------------------------------------------------------


def test_a_start_over_the_overall_token_budget_is_refused_with_the_figures(
    store: Store, tmp_path: Path
) -> None:
    spent(store, tokens=1500)
    done = run_ecc(
        "-c", "token_budget=1000", "-c", "budget_action=stop",
        "run", "-d", "--harness", "shell", "--no-worktree", "echo hi",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: ")
    assert "overall token budget" in line and "1,500" in line and "1,000" in line
    assert 'budget_action = "stop"' in line
    assert session_ids(store) == ["old"]  # nothing written


def test_the_click_path_and_the_cost_budget_refuse_too(store: Store, tmp_path: Path) -> None:
    spent(store, cost=2.5)
    done = run_ecc(
        "-c", "cost_budget_usd=2", "-c", "budget_action=stop",
        "run", "--harness", "shell", "--no-worktree", "echo hi",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "overall cost budget" in line and "$2.50" in line and "$2.00" in line
    assert session_ids(store) == ["old"]


def test_notify_starts_as_before_and_under_the_limit_stop_starts(
    store: Store, tmp_path: Path
) -> None:
    spent(store, tokens=1500)
    notify = run_ecc(
        "-c", "token_budget=1000", "run", "--harness", "shell", "--no-worktree", "echo hi",
        cwd=tmp_path,
    )  # fmt: skip
    assert notify.returncode == 0, notify.stderr
    under = run_ecc(
        "-c", "token_budget=5000", "-c", "budget_action=stop",
        "run", "--harness", "shell", "--no-worktree", "echo hi",
        cwd=tmp_path,
    )  # fmt: skip
    assert under.returncode == 0, under.stderr
    assert len(session_ids(store)) == 3


def test_refusal_checks_every_limited_meter() -> None:
    class Totals:
        def usage_totals(self) -> dict[str, float]:
            return {"sessions": 1, "input_tokens": 60, "output_tokens": 40, "cost_usd": 0.5}

    config = Config(token_budget=100, cost_budget_usd=10, budget_action="stop")
    with pytest.raises(budgets.OverBudget) as refused:
        budgets.refuse_start(Totals(), config)  # type: ignore[arg-type]
    assert refused.value.scope == "overall" and refused.value.meter == "tokens"
    assert (refused.value.used, refused.value.limit) == (100, 100)  # at the limit is over
    budgets.refuse_start(Totals(), Config(token_budget=101, budget_action="stop"))  # type: ignore[arg-type]
    budgets.refuse_start(Totals(), Config(token_budget=100))  # type: ignore[arg-type]  # notify


def test_resuming_a_session_over_its_own_budget_is_refused(store: Store, tmp_path: Path) -> None:
    store.insert_session(
        "mine1234",
        task="echo again",
        harness="shell",
        state=State.STOPPED,
        reason="test",
        project_dir=str(tmp_path),
        working_dir=str(tmp_path),
    )
    store.add_usage("mine1234", 300, 0, 0.0)
    done = run_ecc(
        "-c", "session_token_budget=200", "-c", "budget_action=stop", "resume", "mine1234",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "session token budget" in line and "300" in line and "200" in line
    assert store.get_session("mine1234").state == State.STOPPED


def test_the_remote_api_refuses_with_409_over_budget(store: Store, tmp_path: Path) -> None:
    from ecc.remote.app import create_app
    from ecc.remote.settings import Settings
    from ecc.remote.tokens import TokenSet
    from ecc.runtime.config.model import get_config

    spent(store, tokens=1500)
    token = "t" * 43
    config = get_config().model_copy(update={"token_budget": 1000, "budget_action": "stop"})
    settings = Settings(
        tokens=TokenSet([token]),
        config=config,
        max_body_bytes=4096,
        rate_limit_per_minute=600,
        read_timeout_secs=5,
        allowed_roots=[tmp_path.resolve()],
    )
    body = {"task": "true", "repository": str(tmp_path), "harness": "shell", "worktree": False}
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(settings), headers=auth) as client:
        reply = client.post("/v1/sessions", json=body)
        assert reply.status_code == 409, reply.text
        assert reply.json()["error"] == "over_budget"
        assert "overall token budget" in reply.json()["message"]
    assert session_ids(store) == ["old"]


# -- stopping a running session ----------------------------------------------------------------

FAKE_CODEX = """#!/bin/sh
# prints what `codex exec --json` prints: the thread, then a turn's running usage total
echo '{"type":"thread.started","thread_id":"th-1"}'
echo '{"type":"turn.completed","usage":{"input_tokens":120,"output_tokens":30}}'
echo '{"type":"turn.completed","usage":{"input_tokens":260,"output_tokens":60}}'
exec sleep 60
"""


def test_a_running_session_going_over_its_budget_is_stopped(store: Store, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "codex"
    fake.write_text(FAKE_CODEX)
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    started = time.monotonic()
    done = run_ecc(
        "-c", "session_token_budget=200", "-c", "budget_action=stop", "-c", "stop_grace_secs=1",
        "run", "--harness", "codex", "--no-worktree", "do the thing",
        cwd=work, env=env, timeout=45,
    )  # fmt: skip
    assert time.monotonic() - started < 40  # stopped, not the fake's 60 s sleep
    (session,) = store.list_sessions()
    assert session.state == State.STOPPED, (session.reason, done.stderr)
    assert (session.input_tokens, session.output_tokens) == (260, 60)
    (stop,) = [e for e in store.list_events(session.id) if e["kind"] == "budget_stop"]
    assert "session token budget" in stop["reason"]
    assert "320" in stop["reason"] and "200" in stop["reason"]
    assert stop["data"] == {
        "scope": "session",
        "meter": "tokens",
        "used": 320,
        "limit": 200,
    }
    assert session.reason == "stopped: session token budget exceeded (320 of 200 tokens)"
    assert done.returncode != 0


def test_the_stop_reason_is_the_budget_of_this_run_only(store: Store) -> None:
    config = Config(session_token_budget=100, budget_action="stop")
    store.insert_session(
        "live", task="t", harness="shell", state=State.RUNNING, reason="test",
        project_dir="/tmp", working_dir="/tmp",
    )  # fmt: skip
    assert budgets.stop_reason(store, "live") is None
    store.add_usage("live", 150, 0)
    budgets.check(store, config)
    assert budgets.stop_reason(store, "live") == "session token budget exceeded (150 of 100 tokens)"
    store.transition("live", State.STOPPED, "stopped on request")
    store.transition("live", State.PENDING, "resumed on request", stop_requested=0)
    assert budgets.stop_reason(store, "live") is None  # a later run's stop is not the budget's


def test_a_budget_stop_names_the_overall_budget_for_every_session(store: Store) -> None:
    config = Config(cost_budget_usd=1.0, budget_action="stop")
    spent(store, cost=1.25)
    store.insert_session(
        "live", task="t", harness="shell", state=State.RUNNING, reason="test",
        project_dir="/tmp", working_dir="/tmp",
    )  # fmt: skip
    budgets.check(store, config)
    (stop,) = [e for e in store.list_events("live") if e["kind"] == "budget_stop"]
    assert stop["reason"].startswith("overall cost budget exceeded ($1.25 of $1.00)")
    assert json.loads(json.dumps(stop["data"]))["scope"] == "overall"
    assert store.get_session("live").stop_requested is True
