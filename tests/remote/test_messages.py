"""``POST/GET /v1/sessions/{id}/messages`` and ``ecc send --remote``, over real HTTP on 127.0.0.1.

The server's sessions run a fake ``claude`` (:mod:`tests.sessions.fake_agent`), which records
each run's prompt and resume id and answers from the conversation it kept.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_ecc
from tests.remote.conftest import Server
from tests.sessions.fake_agent import FakeAgent

DONE = {"completed", "failed", "stopped"}


def test_a_follow_up_over_http_continues_the_conversation(
    start_server, isolated_env, tmp_path: Path
) -> None:
    agent = FakeAgent(tmp_path)
    server: Server = start_server(extra_env=agent.env)
    session = server.create("draft the plan", harness="claude")
    first = server.wait_state(session["id"], DONE)
    assert first["state"] == "completed", first

    reply = server.call(
        "POST", f"/v1/sessions/{session['id'][:6]}/messages", {"text": "now do step one"}
    )
    assert reply.status == 202, reply.body
    assert reply.body["id"] == session["id"] and reply.body["message"]["status"] == "sent"
    assert reply.body["message"]["role"] == "user"
    done = server.wait_state(session["id"], DONE)
    assert done["state"] == "completed", done

    calls = agent.calls()
    assert [c["prompt"] for c in calls] == ["draft the plan", "now do step one"]
    kept = json.loads((agent.dir / f"{calls[1]['resume']}.json").read_text())
    assert kept == ["draft the plan", "now do step one"]  # resumed the first run's conversation
    conversation = server.call("GET", f"/v1/sessions/{session['id']}/messages").body
    assert [(m["run"], m["role"], m["status"]) for m in conversation["messages"]] == [
        (1, "user", "sent"),
        (1, "agent", "received"),
        (2, "user", "sent"),
        (2, "agent", "received"),
    ]
    assert conversation["messages"][-1]["text"] == (
        "turn 2: now do step one (earlier: draft the plan)"
    )
    assert conversation["truncated"] is False
    newest = server.call("GET", f"/v1/sessions/{session['id']}/messages?limit=1").body
    assert len(newest["messages"]) == 1 and newest["truncated"] is True

    add = run_ecc("remote", "add", "lo", server.url, "--token-file", str(server.token_file))
    assert add.returncode == 0, add.stderr
    sent = run_ecc("send", "--remote", "lo", session["id"], "and step two")
    assert sent.returncode == 0, sent.stderr
    assert f"Message sent to session {session['id']}" in sent.stdout
    server.wait_state(session["id"], DONE)
    assert agent.calls()[-1]["prompt"] == "and step two"


def test_follow_ups_the_server_refuses(start_server, tmp_path: Path) -> None:
    server: Server = start_server()
    shell = server.create("true")
    server.wait_state(shell["id"], DONE)
    path = f"/v1/sessions/{shell['id']}/messages"
    refused = server.call("POST", path, {"text": "more"})
    assert refused.status == 409 and refused.body["error"] == "refused", refused.body
    assert "no conversation to continue" in refused.body["message"]
    for body in ({"text": ""}, {"text": "   "}, {"text": "x" * 70_000}, {"txt": "a"}, {}):
        bad = server.call("POST", path, body)
        assert bad.status in (413, 422), (body, bad.body)
    nul = server.call("POST", path, raw=json.dumps({"text": "a\u0000b"}).encode(),
                      headers={"Content-Type": "application/json"})  # fmt: skip
    assert nul.status == 422, nul.body
    assert server.call("POST", "/v1/sessions/ffffffff/messages", {"text": "hi"}).status == 404
    listed = server.call("GET", path).body
    assert [m["role"] for m in listed["messages"]] == ["user"]  # the task only; nothing added
