"""Delegation with the real CLIs: Claude Code's agent starts a Codex session through ecc's
sessions MCP server, which ecc registered in the claude process itself (``--mcp-config``).

The stub model scripts the parent's turns (``StubServer.anthropic_script``): an MCP call of
``session_start`` (codex, the task), then ``session_wait`` on the id the first result carried,
then a second ``session_start`` that ``[delegation] max_children = 1`` refuses, then its final
text. The child codex runs the stub's default conversation. The parent's conversation, as the
stub received it, must carry the child's final answer and the refusal in its tool results.
A second run with ``max_depth = 0`` is refused its first child.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import clis
import pytest
import stub_server
from clis import ecc
from stub_server import Step, tool_results

pytestmark = pytest.mark.e2e

CHILD_TASK = "create out.txt for the parent"
PARENT_FINAL = "PARENT-DONE: the child answered"
PROFILES = """
[agent_profiles.e2e-codex]
permission_mode = "bypassPermissions"
model = "stub-model"
"""


def _started_id(body: dict[str, Any]) -> dict[str, Any]:
    """session_wait's input: the id the first tool result (session_start's) carried."""
    started = json.loads(tool_results(body.get("messages", []))[0])
    return {"id": started["started"]["id"], "timeout_secs": 120}


def _limits(config: Path, max_depth: int) -> None:
    """The user's config with these limits (before the profiles ``env_for`` wrote)."""
    text = config.read_text().split("# profiles\n")[-1]
    limits = f"[delegation]\nmax_children = 1\nmax_depth = {max_depth}\n"
    config.write_text(f"{limits}# profiles\n{text}")


def test_claude_delegates_to_codex_and_reads_its_answer(
    env_for, git_repo: Path, stub: stub_server.StubServer, tmp_path: Path, cli_bin: Path
) -> None:
    env = env_for("claude", PROFILES)
    _limits(Path(env["ECC_CONFIG"]), max_depth=1)
    codex = clis.prepare("codex", tmp_path / "harness-home", stub.url, cli_bin)
    env.update(CODEX_HOME=codex["CODEX_HOME"], STUB_API_KEY=codex["STUB_API_KEY"])
    start = {"task": CHILD_TASK, "harness": "codex", "profile": "e2e-codex"}
    stub.anthropic_script = [
        Step(tool="session_start", input=start),
        Step(tool="session_wait", input=_started_id),
        Step(tool="session_start", input=start),
        Step(text=PARENT_FINAL),
    ]
    done = ecc(env, git_repo, "run", "--harness", "claude", "--profile", "e2e", "--json", "--",
               "delegate the file to codex")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    parent = json.loads(done.stdout)
    assert parent["state"] == "completed"
    shown = json.loads(ecc(env, git_repo, "status", parent["id"], "--json").stdout)
    assert shown["conversation"][-1]["text"] == PARENT_FINAL

    # the parent's last model request carries the three tool results, in order
    anthropic = [r["body"] for r in stub.model_requests() if r["path"].startswith("/v1/messages")]
    results = max((tool_results(b.get("messages", [])) for b in anthropic), key=len)
    assert len(results) == 3, results
    waited = json.loads(results[1])["session"]
    assert waited["done"] is True and waited["state"] == "completed"
    assert waited["final_answer"] == stub_server.FINAL_TEXT  # the child's (codex's) answer
    assert waited["harness"] == "codex" and waited["tokens"] > 0
    assert "out.txt" in waited["files_changed"]
    assert results[2] == (
        f"Error: cannot start a child session: session {parent['id']} has reached "
        "[delegation] max_children (1)"
    )

    # the child really ran codex against the stub, in its own worktree of the repository
    assert any(r["path"].startswith("/v1/responses") for r in stub.model_requests())
    tree = json.loads(ecc(env, git_repo, "sessions", "--all", "--tree", "--json").stdout)
    assert [(s["harness"], s["depth"], s["parent_id"]) for s in tree] == [
        ("claude", 0, None),
        ("codex", 1, parent["id"]),
    ]
    child = tree[1]
    assert child["id"] == waited["id"] and child["state"] == "completed"
    assert child["worktree_path"] != parent["worktree_path"]
    inbox = json.loads(ecc(env, git_repo, "messages", "inbox", parent["id"], "--json").stdout)
    [message] = inbox["messages"]
    assert message["kind"] == "child_result" and stub_server.FINAL_TEXT in message["text"]

    # a session at max_depth (0 here: a person's session) may start none
    _limits(Path(env["ECC_CONFIG"]), max_depth=0)
    stub.anthropic_script = [Step(tool="session_start", input=start), Step(text=PARENT_FINAL)]
    before = len(stub.model_requests())
    again = ecc(env, git_repo, "run", "--harness", "claude", "--profile", "e2e", "--json", "--",
                "delegate again")  # fmt: skip
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    second = json.loads(again.stdout)
    new = [r["body"] for r in stub.model_requests()[before:] if r["path"].startswith("/v1/mes")]
    refused = max((tool_results(b.get("messages", [])) for b in new), key=len)
    assert refused == [
        f"Error: cannot start a child session: session {second['id']} is at [delegation] "
        "max_depth (0)"
    ]
