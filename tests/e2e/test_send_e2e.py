"""``ecc send`` with the real Claude Code, Codex, Gemini and OpenCode CLIs against the stub model.

After a first run, a follow-up must continue that very conversation through the CLI's own
resume: the model request of the follow-up run carries the earlier turns (the first run's
answer) and the new message as the user's latest words, and ecc records the conversation.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import clis
import pytest
import stub_server
from clis import ecc, strings

pytestmark = pytest.mark.e2e

# Quotes and a leading dash: must reach the model whole, as the prompt, never as a flag.
MESSAGE = '-now say "ok" (follow-up 7f3)'


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_send_continues_the_real_cli_conversation(
    harness: str, env_for, git_repo: Path, stub: stub_server.StubServer
) -> None:
    env = env_for(harness)
    done = ecc(env, git_repo, "run", "--harness", harness, "--profile", "e2e", "--json", "--",
               "create out.txt")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    session = json.loads(done.stdout)
    sid, harness_sid = session["id"], session["harness_session_id"]
    assert session["state"] == "completed" and harness_sid

    before = len(stub.model_requests())
    sent = ecc(env, git_repo, "send", sid, "--json", "--", MESSAGE)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-2000:]
    assert json.loads(sent.stdout)["message"]["status"] == "sent"
    deadline = time.monotonic() + clis.TIMEOUT
    while True:
        status = json.loads(ecc(env, git_repo, "status", sid, "--json").stdout)
        if status["run_kind"] == "followup" and status["state"] in ("completed", "failed"):
            break
        assert time.monotonic() < deadline, f"the follow-up of {sid} did not finish: {status}"
        time.sleep(0.2)
    assert status["state"] == "completed", ecc(env, git_repo, "logs", sid).stdout[-2000:]
    assert status["harness_session_id"] == harness_sid
    assert status["working_dir"] == session["working_dir"]

    new = stub.model_requests()[before:]
    assert new, "the follow-up run never reached the stub"
    texts = [text for r in new for text in strings(r["body"])]
    assert any(MESSAGE in text for text in texts), "the message is not in the follow-up's prompt"
    assert any(stub_server.FINAL_TEXT in text for text in texts), "the earlier turns are missing"
    turns = [(t["run"], t["role"]) for t in status["conversation"]]
    assert turns[0] == (1, "user") and (2, "user") in turns and turns[-1] == (2, "agent")
    assert next(t["text"] for t in status["conversation"] if t["run"] == 2) == MESSAGE
    assert stub_server.FINAL_TEXT in status["conversation"][-1]["text"]
