"""``GET /v1/sessions/{id}/tool-calls`` over real HTTP: each call once, its input an excerpt."""

from __future__ import annotations

from ecc.store.open import open_store
from tests.remote.conftest import Server


def test_a_sessions_tool_calls_are_listed_once_each_with_a_masked_excerpt(start_server) -> None:
    server: Server = start_server()
    session = server.create("echo hi")
    server.wait_state(session["id"], {"completed", "failed"})
    secret = "curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://x.example"
    with open_store(server.base / "home/.local/state/ecc/ecc.db") as store:
        for source, decision in (("output", "observed"), ("hook", "deny")):
            store.record_tool_call(
                session_id=session["id"],
                harness="claude",
                tool="Bash",
                input={"command": secret},
                score=0.5,
                action="review",
                reasons=["network"],
                decision=decision,
                call_id="toolu_1",
                source=source,
            )
        store.record_tool_call(
            session_id=session["id"],
            harness="claude",
            tool="Read",
            input={"file_path": "README.md"},
            score=0.05,
            action="allow",
            decision="observed",
            call_id="toolu_2",
            source="output",
        )

    reply = server.call("GET", f"/v1/sessions/{session['id'][:6]}/tool-calls")
    assert reply.status == 200, reply.body
    assert reply.body["session_id"] == session["id"]
    calls = reply.body["tool_calls"]
    assert [(c["tool"], c["source"], c["decision"]) for c in calls] == [
        ("Bash", "both", "deny"),
        ("Read", "output", "observed"),
    ]
    assert "abcdefghijklmnop1234" not in reply.raw.decode()
    assert calls[0]["input_excerpt"].startswith("curl -H")

    one = server.call("GET", f"/v1/sessions/{session['id']}/tool-calls?limit=1")
    assert [c["tool"] for c in one.body["tool_calls"]] == ["Read"]
    missing = server.call("GET", "/v1/sessions/0123456789ab/tool-calls")
    assert missing.status == 404 and missing.body["error"] == "not_found"
