"""A ``require_confirmation`` call held by a real ``ecc hook`` until ``ecc approve``, ``ecc deny``
or the timeout decides, with the decision recorded and the session shown ``waiting``."""

from __future__ import annotations

import getpass
import json
import signal
import time

from ecc.store.open import default_path, open_store
from tests.approvals.conftest import (
    CONFIRM,
    ENFORCE,
    WAIT_SECS,
    approvals,
    claude_call,
    codex_call,
    make_session,
    wait_pending,
)
from tests.conftest import run_ecc


def tool_calls(session_id: str) -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_tool_calls(session_id)


def test_a_held_call_waits_shows_everywhere_and_runs_after_approve(held) -> None:
    session = make_session()
    hook = held("claude", claude_call(), {**ENFORCE, "ECC_SESSION_ID": session})
    pending = wait_pending(hook)
    assert pending["session_id"] == session and pending["tool"] == "Bash"
    assert pending["input_excerpt"] == CONFIRM
    assert pending["action"] == "require_confirmation" and 0.6 <= pending["score"] < 0.85
    assert pending["decision"] is None and pending["expires_at"] > pending["created_at"]
    assert hook.proc.poll() is None  # still held

    listed = json.loads(run_ecc("sessions", "--json").stdout)
    assert [(s["id"], s["state"], s["display_state"]) for s in listed] == [
        (session, "running", "waiting")
    ]
    assert listed[0]["pending_approval"] == pending["id"]
    text = run_ecc("sessions").stdout
    assert "waiting" in text and "running" not in text
    status = run_ecc("status", session)
    assert status.returncode == 0, status.stderr
    assert "waiting" in status.stdout
    assert f"ecc approve {pending['id']}" in status.stdout
    assert f"ecc deny {pending['id']}" in status.stdout
    status_json = json.loads(run_ecc("status", session, "--json").stdout)
    assert status_json["display_state"] == "waiting"
    assert status_json["approval"]["id"] == pending["id"]
    assert "Bash" in run_ecc("approvals").stdout

    approved = run_ecc("approve", pending["id"])
    assert approved.returncode == 0, approved.stderr
    code, out, err = hook.finish()
    assert code == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow"
    assert getpass.getuser() in answer["permissionDecisionReason"]

    (decided,) = approvals("--all")
    assert decided["decision"] == "allow" and decided["decided_by"] == getpass.getuser()
    assert decided["decided_at"] >= decided["created_at"]
    assert approvals() == []
    assert [c["decision"] for c in tool_calls(session)] == ["allow"]
    after = json.loads(run_ecc("sessions", "--json").stdout)
    assert after[0]["display_state"] == "running" and after[0]["pending_approval"] is None


def test_deny_with_a_reason_reaches_the_agent_and_a_second_decision_is_refused(held) -> None:
    session = make_session()
    hook = held("codex", codex_call(), {**ENFORCE, "ECC_SESSION_ID": session})
    pending = wait_pending(hook)
    denied = run_ecc("deny", pending["id"][:6], "--reason", "not on main")
    assert denied.returncode == 0, denied.stderr
    code, out, err = hook.finish()
    assert code == 2 and out == ""
    assert "denied by" in err and "not on main" in err
    assert "cannot ask" not in err

    (decided,) = approvals("--all")
    assert decided["decision"] == "deny" and decided["reason"] == "not on main"
    again = run_ecc("approve", pending["id"])
    assert again.returncode == 1
    assert again.stderr.startswith("Error: ") and len(again.stderr.strip().splitlines()) == 1
    assert "already decided" in again.stderr and "deny" in again.stderr
    assert [c["decision"] for c in tool_calls(session)] == ["deny"]


def test_unknown_ids_and_bad_reasons_are_one_line_errors() -> None:
    missing = run_ecc("approve", "0123456789ab")
    assert missing.returncode == 1 and "no approval" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = run_ecc("deny", "0123456789ab", "--reason", "x" * 2000)
    assert bad.returncode != 0 and "reason" in bad.stderr


def test_no_decision_in_time_is_a_recorded_deny(held) -> None:
    session = make_session()
    env = {**ENFORCE, "ECC_SESSION_ID": session, "ECC__RISK__APPROVAL_TIMEOUT": "1"}
    started = time.monotonic()
    hook = held("claude", claude_call(), env)
    code, out, err = hook.finish()
    assert time.monotonic() - started < WAIT_SECS
    assert code == 2 and out == ""
    assert "no decision within 1 s" in err
    (decided,) = approvals("--all")
    assert decided["decision"] == "deny" and decided["decided_by"] == "timeout"
    late = run_ecc("approve", decided["id"])
    assert late.returncode == 1 and "already decided" in late.stderr


def test_the_timeout_decision_may_be_allow(held) -> None:
    session = make_session()
    env = {
        **ENFORCE,
        "ECC_SESSION_ID": session,
        "ECC__RISK__APPROVAL_TIMEOUT": "1",
        "ECC__RISK__APPROVAL_TIMEOUT_DECISION": "allow",
    }
    code, out, err = held("claude", claude_call(), env).finish()
    assert code == 0, err
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    (decided,) = approvals("--all")
    assert decided["decision"] == "allow" and decided["decided_by"] == "timeout"


def test_a_hook_ended_while_held_records_a_deny(held) -> None:
    session = make_session()
    hook = held("claude", claude_call(), {**ENFORCE, "ECC_SESSION_ID": session})
    pending = wait_pending(hook)
    hook.proc.send_signal(signal.SIGTERM)
    code, _, _ = hook.finish()
    assert code != 0
    (decided,) = approvals("--all")
    assert decided["id"] == pending["id"]
    assert decided["decision"] == "deny" and decided["decided_by"] == "hook"
    assert "SIGTERM" in decided["reason"]


def test_an_unattached_call_still_asks_and_holds_nothing() -> None:
    for env in (ENFORCE, {**ENFORCE, "ECC_SESSION_ID": "0000deadbeef"}):
        done = run_ecc("hook", "--harness", "claude", input=json.dumps(claude_call()), env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert approvals("--all") == []


def test_without_enforcement_nothing_is_held() -> None:
    session = make_session()
    env = {"ECC_SESSION_ID": session}
    done = run_ecc("hook", "--harness", "claude", input=json.dumps(claude_call()), env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert approvals("--all") == []
