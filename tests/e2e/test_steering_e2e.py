"""Steering the real CLIs through ecc: enforcement a session owns, and held calls.

Each test runs one real harness CLI against the stub model (``stub_server.py``), whose tool call
is set per test. The project's policy is only in its *uncommitted* ``.ecc/config.toml`` (the
session's worktree is built from HEAD and never sees it) and ``ecc hooks install`` is never run:
ecc applies its own hook to the harness process of the session. Follow-ups (``ecc send``) are
in ``test_send_e2e.py``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import clis
import pytest
import stub_server
from clis import ecc, strings

pytestmark = pytest.mark.e2e

BLOCKED = "touch ran.txt && git push --force origin main"  # block (0.95)
HELD = "touch held.txt && git reset --hard HEAD"  # require_confirmation
TASK = "do the thing"


def policy(repo: Path, extra: str = "") -> None:
    (repo / ".ecc").mkdir(exist_ok=True)
    (repo / ".ecc" / "config.toml").write_text(f"[risk]\nenforce = true\n{extra}")


def status(env: dict[str, str], repo: Path, sid: str) -> dict[str, Any]:
    shown = ecc(env, repo, "status", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def wait_for(what: str, probe: Any, timeout: float = clis.TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def finished(env: dict[str, str], repo: Path, sid: str) -> dict[str, Any]:
    return wait_for(
        f"session {sid} to finish",
        lambda: (s := status(env, repo, sid))["state"] in ("completed", "failed", "stopped") and s,
    )


def calls(session: dict[str, Any], command_part: str) -> list[dict[str, Any]]:
    return [
        c
        for c in session["tool_calls"]
        if any(command_part in text for text in strings(c["input"]))
    ]


def start(env: dict[str, str], repo: Path, harness: str) -> str:
    started = ecc(env, repo, "run", "-d", "--harness", harness, "--profile", "e2e", "--json", TASK)
    assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]
    return json.loads(started.stdout)["id"]


class Receiver(ThreadingHTTPServer):
    """A webhook receiver on 127.0.0.1 that keeps every JSON body it is sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Receive)
        self.bodies: list[Any] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class _Receive(BaseHTTPRequestHandler):
    server: Receiver

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append(json.loads(raw or b"null"))
        self.send_response(204)
        self.end_headers()


@pytest.fixture
def receiver():
    server = Receiver()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_uncommitted_policy_blocks_the_call(
    harness: str, env_for, git_repo: Path, stub: stub_server.StubServer
) -> None:
    policy(git_repo)
    stub.tool_command = BLOCKED
    env = env_for(harness)
    done = ecc(env, git_repo, "run", "--harness", harness, "--profile", "e2e", "--json", TASK)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    session = status(env, git_repo, json.loads(done.stdout)["id"])
    assert session["enforced"] is True
    assert not (Path(session["working_dir"]) / "ran.txt").exists(), "the blocked call ran"
    [call] = calls(session, "git push --force")
    assert (call["action"], call["decision"]) == ("block", "deny")
    # The agent was told why: the denial reached the model as the tool's result.
    later = stub.model_requests()[1:]
    assert any("blocked" in text for r in later for text in strings(r["body"]))


@pytest.mark.parametrize("harness", clis.HARNESSES)
@pytest.mark.parametrize("answer", ["approve", "deny", "timeout"])
def test_a_held_call_waits_for_a_person(
    harness: str, answer: str, env_for, git_repo: Path, stub, receiver: Receiver
) -> None:
    policy(git_repo, "approval_timeout = 4\n" if answer == "timeout" else "")
    stub.tool_command = HELD
    user = (
        '[notifications]\nnotifiers = ["webhook"]\n'
        '[notifications.settings.webhook]\nurl_env = "E2E_WEBHOOK_URL"\n'
    )
    env = env_for(harness, user)
    env["E2E_WEBHOOK_URL"] = receiver.url
    sid = start(env, git_repo, harness)

    def pending() -> list[dict[str, Any]]:
        listed = ecc(env, git_repo, "approvals", "--json")
        assert listed.returncode == 0, listed.stderr
        return [a for a in json.loads(listed.stdout) if a["session_id"] == sid]

    [held] = wait_for("the held call", pending)
    assert status(env, git_repo, sid)["display_state"] == "waiting"
    request = wait_for(
        "the approval notification",
        lambda: [b for b in receiver.bodies if b.get("event") == "approval_request"],
    )[0]
    assert held["id"] in json.dumps(request)
    if answer == "approve":
        assert ecc(env, git_repo, "approve", held["id"]).returncode == 0
    elif answer == "deny":
        assert ecc(env, git_repo, "deny", held["id"], "--reason", "not now").returncode == 0
    session = finished(env, git_repo, sid)
    worktree = Path(session["working_dir"])
    [call] = calls(session, "git reset --hard")
    assert call["action"] == "require_confirmation"
    if answer == "approve":
        assert (worktree / "held.txt").exists(), "the approved call did not run"
        assert call["decision"] == "allow"
    else:
        assert not (worktree / "held.txt").exists(), f"the call ran after {answer}"
        assert call["decision"] == "deny"
