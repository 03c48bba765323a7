"""Delegation through ``ecc-sessions-mcp``: a real MCP client over stdio, real sessions.

The server is started as a managed session's harness would start it (``ECC_SESSION_ID`` of a
parent session); children run the fake ``claude`` (:mod:`tests.sessions.fake_agent`) or the
shell harness. Every test runs on SQLite and on PostgreSQL (``tests/sessions/conftest.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from ecc.store.base import Store
from tests.conftest import run_ecc
from tests.sessions.conftest import wait_state, write_config
from tests.sessions.fake_agent import FakeAgent

SERVER = str(Path(sys.executable).with_name("ecc-sessions-mcp"))
TOOLS = {
    "session_start",
    "session_status",
    "session_wait",
    "session_children",
    "message_send",
    "message_inbox",
}


def _server(session_id: str | None, cwd: Path, extra: dict[str, str] | None = None):
    env = dict(os.environ)
    env.pop("ECC_SESSION_ID", None)
    if session_id is not None:
        env["ECC_SESSION_ID"] = session_id
    env.update(extra or {})
    return StdioServerParameters(command=SERVER, env=env, cwd=str(cwd))


def _client(params: StdioServerParameters, body: Any) -> None:
    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            await body(client)

    anyio.run(main)


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def _parent(git_repo: Path, *env: dict[str, str]) -> str:
    """A finished shell session in ``git_repo`` (its own worktree): the delegating parent."""
    merged: dict[str, str] = {}
    for extra in env:
        merged.update(extra)
    done = run_ecc("run", "--harness", "shell", "--json", "true", cwd=git_repo, env=merged)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_an_agent_starts_a_child_and_reads_its_final_answer(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    agent = FakeAgent(tmp_path)
    parent = _parent(git_repo)
    seen: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        listed = await client.list_tools()
        seen["tools"] = {tool.name for tool in listed.tools}
        started = _payload(
            await client.call_tool(
                "session_start", {"task": "summarise the parser", "harness": "claude"}
            )
        )
        child = started["started"]["id"]
        seen["wait"] = _payload(
            await client.call_tool("session_wait", {"id": child, "timeout_secs": 60})
        )["session"]
        seen["children"] = _payload(await client.call_tool("session_children", {}))["children"]
        seen["inbox"] = _payload(await client.call_tool("message_inbox", {}))["messages"]
        seen["again"] = _payload(await client.call_tool("message_inbox", {}))["messages"]

    _client(_server(parent, git_repo, agent.env), body)
    assert seen["tools"] == TOOLS
    result = seen["wait"]
    assert result["done"] is True and result["state"] == "completed"
    assert result["final_answer"] == "turn 1: summarise the parser (earlier: )"
    assert result["tokens"] == 5 and result["harness"] == "claude"
    child = store.get_session(result["id"])
    assert child is not None and child.parent_id == parent
    parent_row = store.get_session(parent)
    assert parent_row is not None
    # the child works in the parent's repository, in a worktree of its own
    assert child.repo_root == parent_row.repo_root and child.use_worktree
    assert child.worktree_path and child.worktree_path != parent_row.worktree_path
    assert agent.calls()[0]["cwd"] == child.worktree_path
    assert [c["id"] for c in seen["children"]] == [child.id]

    # the child's end put its answer and a summary in the parent's inbox, read once
    [message] = seen["inbox"]
    assert message["kind"] == "child_result" and message["sender_id"] == child.id
    assert "turn 1: summarise the parser" in message["text"]
    assert message["data"]["state"] == "completed" and message["data"]["tokens"] == 5
    assert seen["again"] == []

    tree = json.loads(run_ecc("sessions", "--all", "--tree", "--json").stdout)
    assert [(row["id"], row["depth"], row["parent_id"]) for row in tree] == [
        (parent, 0, None),
        (child.id, 1, parent),
    ]
    shown = run_ecc("status", parent).stdout
    assert f"Children:    {child.id} (completed)" in shown
    assert f"Parent:      {parent}" in run_ecc("status", child.id).stdout
    text = run_ecc("sessions", "--all", "--tree").stdout.splitlines()
    assert text[1].startswith(parent) and text[2].startswith(child.id)
    assert "└─ summarise the parser" in text[2]


def test_limits_refuse_with_one_clear_line(git_repo: Path, store: Store) -> None:
    write_config(Path(os.environ["HOME"]), delegation={"max_depth": 1, "max_children": 1})
    parent = _parent(git_repo)
    errors: dict[str, Any] = {}

    async def as_parent(client: ClientSession) -> None:
        first = _payload(
            await client.call_tool("session_start", {"task": "true", "harness": "shell"})
        )
        errors["child"] = first["started"]["id"]
        second = await client.call_tool("session_start", {"task": "true", "harness": "shell"})
        errors["children"] = (second.is_error, second.content[0].text)

    _client(_server(parent, git_repo), as_parent)
    child = errors["child"]
    assert errors["children"] == (
        True,
        f"Error: cannot start a child session: session {parent} has reached [delegation] "
        "max_children (1)",
    )
    wait_state(store, child, "completed", "failed")

    async def as_child(client: ClientSession) -> None:
        refused = await client.call_tool("session_start", {"task": "true", "harness": "shell"})
        errors["depth"] = (refused.is_error, refused.content[0].text)

    _client(_server(child, git_repo), as_child)
    assert errors["depth"] == (
        True,
        f"Error: cannot start a child session: session {child} is at [delegation] max_depth (1)",
    )
    assert [s.id for s in store.children(parent)] == [child]
    assert store.children(child) == []


def test_a_session_acts_only_as_itself(git_repo: Path, store: Store) -> None:
    parent = _parent(git_repo)
    other = _parent(git_repo)
    answers: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        for tool in ("session_status", "session_wait"):
            refused = await client.call_tool(tool, {"id": other})
            answers[tool] = (refused.is_error, refused.content[0].text)
        with pytest.raises(MCPError) as spoof:  # no argument names another parent
            await client.call_tool(
                "session_start", {"task": "true", "harness": "shell", "parent": other}
            )
        answers["spoof"] = str(spoof.value)
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("memory_save", {"title": "t", "body": "b"})
        answers["unknown"] = str(unknown.value)

    _client(_server(parent, git_repo), body)
    line = f"Error: session '{other}' is not a child of session {parent}"
    assert answers["session_status"] == (True, line)
    assert answers["session_wait"] == (True, line)
    assert answers["spoof"] == "Invalid arguments for session_start: / additionalProperties."
    assert answers["unknown"] == "Unknown or missing sessions tool."
    assert store.children(other) == [] and store.children(parent) == []

    for env_id in (None, "0123456789ab"):
        params = _server(env_id, git_repo)
        started = subprocess.run(
            [params.command], env=params.env, cwd=params.cwd, input="", capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
        assert started.returncode == 1
        assert "ECC sessions MCP startup failed" in started.stderr


def test_messages_between_sessions_and_people(git_repo: Path, store: Store) -> None:
    first = _parent(git_repo)
    second = _parent(git_repo)
    sent = run_ecc("messages", "send", first[:6], "check \x1b[31mthe\u202e logs", "--json")
    assert sent.returncode == 0, sent.stderr
    message = json.loads(sent.stdout)["message"]
    assert message["recipient_id"] == first and message["sender_id"] is None

    seen: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        seen["sent"] = _payload(
            await client.call_tool("message_send", {"to": second, "text": "your turn"})
        )
        seen["inbox"] = (await client.call_tool("message_inbox", {})).content[0].text

    _client(_server(first, git_repo), body)
    assert "\\u001b[31mthe\\u202e logs" in seen["inbox"]  # escaped for the agent
    assert "\x1b" not in seen["inbox"] and "\u202e" not in seen["inbox"]
    inbox = json.loads(run_ecc("messages", "inbox", second, "--json").stdout)
    assert [(m["sender_id"], m["text"], m["read_at"]) for m in inbox["messages"]] == [
        (first, "your turn", None)
    ]
    read = json.loads(run_ecc("messages", "inbox", first, "--unread", "--json").stdout)
    assert read["messages"] == []  # the agent read it through the MCP server
    shown = run_ecc("messages", "inbox", first).stdout
    assert "from a person" in shown and "\x1b" not in shown and "the" in shown

    too_long = run_ecc("messages", "send", first, "x" * 20000)
    assert too_long.returncode == 1
    assert too_long.stderr.strip() == "Error: the message is 20000 bytes; at most 16384 bytes"
    missing = run_ecc("messages", "send", "ffffffffffff", "hi")
    assert missing.returncode == 1 and missing.stderr.startswith("Error: no session matches")
    assert len(store.inbox(first)) == 1


def test_the_parents_budget_covers_its_children(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    write_config(Path(os.environ["HOME"]), session_token_budget=4, budget_action="stop")
    agent = FakeAgent(tmp_path)
    parent = _parent(git_repo)
    seen: dict[str, Any] = {}

    async def body(client: ClientSession) -> None:
        first = _payload(
            await client.call_tool("session_start", {"task": "first", "harness": "claude"})
        )
        child = first["started"]["id"]
        await client.call_tool("session_wait", {"id": child, "timeout_secs": 60})
        refused = await client.call_tool("session_start", {"task": "second", "harness": "claude"})
        seen["refused"] = (refused.is_error, refused.content[0].text)

    _client(_server(parent, git_repo, agent.env), body)
    # the child's 5 tokens count against the parent's budget of 4: no second child
    assert seen["refused"][0] is True
    assert seen["refused"][1].startswith(
        "Error: cannot start a child session: the session token budget is used up (5 of 4 tokens)"
    )
    assert store.family_usage(parent)["input_tokens"] == 3
    budget = json.loads(run_ecc("budget", "--all", "--json").stdout)
    mine = next(row for row in budget["sessions"] if row["id"] == parent)
    assert mine["tokens"]["used"] == 5 and mine["budget_state"] == "over_budget"


@pytest.mark.parametrize("value", [1, 5])
def test_a_project_may_lower_the_limits_but_not_raise_them(git_repo: Path, value: int) -> None:
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text(f"[delegation]\nmax_depth = {value}\n")
    shown = run_ecc("config", "get", "delegation.max_depth", "--json", cwd=git_repo)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == min(value, 2)  # the default is 2


def test_a_managed_session_gets_the_sessions_server_unless_delegation_is_off(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    agent = FakeAgent(tmp_path)
    first = run_ecc("run", "--harness", "claude", "--json", "one", cwd=git_repo, env=agent.env)
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout)["id"]
    [flag] = [a for a in agent.calls()[0]["argv"] if a.startswith("--mcp-config=")]
    assert flag.endswith(f"/sessions/{session}/hooks/claude-mcp.json")
    reasons = [e["reason"] for e in store.list_events(session) if e["kind"] == "mcp"]
    assert reasons == ["MCP servers registered: ecc-sessions"]

    write_config(Path(os.environ["HOME"]), delegation={"enabled": False})
    second = run_ecc("run", "--harness", "claude", "two", cwd=git_repo, env=agent.env)
    assert second.returncode == 0, second.stderr
    assert not any(a.startswith("--mcp-config") for a in agent.calls()[1]["argv"])
