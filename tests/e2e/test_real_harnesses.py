"""``ecc run --harness NAME`` with the real Claude Code, Codex, Gemini and OpenCode CLIs.

Each CLI talks to the project's stub model server on 127.0.0.1 (``stub_server.py``): it is asked
to run ``echo hello > out.txt`` and then answers :data:`stub_server.FINAL_TEXT`. Each test checks,
through ecc's own commands, that the session completed in its worktree, that the tool really ran
there, that the final text was captured, that token usage and the harness's session id were
recorded, and that the adapter's resume command for the recorded id continues that very
conversation (the stub sees the earlier turns in the resumed request). No address but 127.0.0.1
is configured anywhere.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import clis
import psutil
import pytest
import stub_server
from clis import ecc, strings

pytestmark = pytest.mark.e2e

# Starts with dashes and holds quotes: must reach the model as the prompt, not as flags.
TASK = '--create out.txt (it\'s a "test")'
TIMEOUT = clis.TIMEOUT


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_run_and_resume_through_ecc(
    harness: str, env_for, git_repo: Path, stub: stub_server.StubServer
) -> None:
    env = env_for(harness)
    done = ecc(env, git_repo, "run", "--harness", harness, "--profile", "e2e", "--json", "--", TASK)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    session = json.loads(done.stdout)
    sid = session["id"]
    assert session["state"] == "completed"

    # The prompt arrived whole, as text, in the first model request.
    first = stub.model_requests()[0]
    assert any(TASK in text for text in strings(first["body"])), "task not in the prompt"

    # The tool call ran in the session's own worktree, not in the main checkout.
    worktree = Path(session["working_dir"])
    assert worktree != git_repo
    assert (worktree / "out.txt").read_text().strip() == "hello"
    assert not (git_repo / "out.txt").exists()

    # The final text is in the captured output; usage and the harness session id are recorded.
    logs = ecc(env, git_repo, "logs", sid, "--stream", "stdout")
    assert logs.returncode == 0
    assert stub_server.FINAL_TEXT in logs.stdout
    assert session["input_tokens"] >= stub_server.INPUT_TOKENS
    assert session["output_tokens"] >= stub_server.OUTPUT_TOKENS
    harness_sid = session["harness_session_id"]
    assert harness_sid

    # `ecc resume` continues the same conversation through the adapter's resume command with
    # the harness's own session id (the command it builds is shown by `ecc harness command`).
    shown = ecc(
        env, worktree, "harness", "command", "--profile", "e2e", "--resume", harness_sid,
        "--json", harness, "--", "-continue",
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert any(harness_sid in arg for arg in json.loads(shown.stdout)["argv"])
    before = len(stub.model_requests())
    # as a person resumes: after the first run's runner has exited (Gemini CLI's chats are in
    # the session's private home, which must outlive the run)
    deadline = time.monotonic() + TIMEOUT
    while any(sid in (p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])):
        assert time.monotonic() < deadline, f"the runner of {sid} never exited"
        time.sleep(0.2)
    resumed = ecc(env, git_repo, "resume", sid)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    deadline = time.monotonic() + TIMEOUT
    while True:
        status = json.loads(ecc(env, git_repo, "status", sid, "--json").stdout)
        if status["state"] in ("completed", "failed", "stopped") and status["run_kind"] == "resume":
            break
        assert time.monotonic() < deadline, f"resume of {sid} did not finish: {status}"
        time.sleep(0.2)
    assert status["state"] == "completed", ecc(env, git_repo, "logs", sid).stdout[-2000:]
    assert status["harness_session_id"] == harness_sid
    logs = ecc(env, git_repo, "logs", sid, "--stream", "stdout")
    assert logs.stdout.count(stub_server.FINAL_TEXT) >= 2
    new = stub.model_requests()[before:]
    assert new, "the resumed run never reached the stub"
    # The earlier turns (the first run's final answer) travel with the resumed request...
    assert any(stub_server.FINAL_TEXT in text for r in new for text in strings(r["body"]))
    # ...and, where the CLI sends its session id to the provider, it is the captured one.
    if harness != "gemini":  # gemini sends no session id to the model API
        assert any(harness_sid in v for r in new for v in r["headers"].values())
