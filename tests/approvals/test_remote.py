"""Approvals over the remote API against a real server: ``GET /v1/approvals`` lists the held
call, ``POST /v1/approvals/{id}`` decides it (token required; a second decision is 409)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.approvals.conftest import ENFORCE, WAIT_SECS, claude_call, make_session
from tests.remote.conftest import Server, launch


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    started = launch(tmp_path / "server")
    yield started
    started.shutdown()


def wait_listed(server: Server) -> dict:
    import time

    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        reply = server.call("GET", "/v1/approvals")
        assert reply.status == 200, reply.body
        if reply.body["approvals"]:
            (approval,) = reply.body["approvals"]
            return approval  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError("the held call never showed in GET /v1/approvals")


def test_list_and_decide_over_http(server: Server, held) -> None:
    store = Path(server.env["ECC_STATE_DIR"]) / "ecc.db"
    session = make_session(store_path=store)
    env = {**server.env, **ENFORCE, "ECC_SESSION_ID": session}
    hook = held("claude", claude_call(), env)

    assert server.call("GET", "/v1/approvals", token=None).status == 401
    approval = wait_listed(server)
    assert approval["session_id"] == session and approval["tool"] == "Bash"
    assert approval["decision"] is None and approval["input_excerpt"] == "rm -rf node_modules"
    shown = server.call("GET", f"/v1/sessions/{session}").body
    assert shown["state"] == "running" and shown["display_state"] == "waiting"
    assert shown["pending_approval"] == approval["id"]
    listed = server.call("GET", "/v1/sessions").body["sessions"]
    assert [s["display_state"] for s in listed] == ["waiting"]
    other = make_session("0123456789ab", store_path=store)  # running, nothing held
    waiting = server.call("GET", "/v1/sessions?state=waiting").body["sessions"]
    assert [s["id"] for s in waiting] == [session]
    running = server.call("GET", "/v1/sessions?state=running").body["sessions"]
    assert {s["id"] for s in running} == {session, other}  # a waiting session is running
    assert server.call("GET", "/v1/sessions?state=asleep").status == 422

    path = f"/v1/approvals/{approval['id']}"
    assert server.call("POST", path, {"decision": "allow"}, token=None).status == 401
    assert server.call("POST", path, {"decision": "maybe"}).status == 422
    assert server.call("POST", path, {"decision": "allow", "extra": 1}).status == 422
    assert server.call("POST", "/v1/approvals/ffffffffffff", {"decision": "allow"}).status == 404
    decided = server.call("POST", path, {"decision": "allow", "reason": "fine from my phone"})
    assert decided.status == 200, decided.body
    assert decided.body["decision"] == "allow" and decided.body["reason"] == "fine from my phone"
    assert decided.body["decided_by"].startswith("remote:")
    code, out, err = hook.finish()
    assert code == 0, err
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"

    again = server.call("POST", path, {"decision": "deny"})
    assert again.status == 409 and again.body["error"] == "decided"
    assert server.call("GET", "/v1/approvals").body["approvals"] == []
    history = server.call("GET", "/v1/approvals?all=true").body["approvals"]
    assert [a["decision"] for a in history] == ["allow"]
    after = server.call("GET", f"/v1/sessions/{session}").body
    assert after["display_state"] == "running" and after["pending_approval"] is None
