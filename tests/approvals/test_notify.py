"""The ``approval_request`` notification of a held call reaches a real webhook receiver on
127.0.0.1, with what a person needs to answer and nothing an agent could use against them."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from ecc.runtime import paths
from tests.approvals.conftest import ENFORCE, WAIT_SECS, claude_call, make_session, wait_pending
from tests.conftest import run_ecc
from tests.notify.test_webhook import Receiver

TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
HOSTILE = f"rm -rf node_modules # \x1b[31mred\x1b[0m {TOKEN} " + "x" * 2000


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def test_approval_request_reaches_the_webhook_with_how_to_answer(held, receiver) -> None:
    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[notifications]\nnotifiers = ["webhook"]\n'
        '[notifications.settings.webhook]\nurl_env = "ECC_TEST_APPROVAL_HOOK"\n'
    )
    session = make_session()
    env = {**ENFORCE, "ECC_SESSION_ID": session, "ECC_TEST_APPROVAL_HOOK": receiver.url()}
    hook = held("claude", claude_call(HOSTILE), env)
    pending = wait_pending(hook)
    deadline = time.monotonic() + WAIT_SECS
    while not receiver.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    (request,) = receiver.requests
    note = request["json"]
    assert note["event"] == "approval_request" and note["session_id"] == session
    data = note["data"]
    assert data["approval_id"] == pending["id"] and data["tool"] == "Bash"
    assert data["action"] == "require_confirmation" and 0.6 <= data["score"] < 0.85
    assert data["approve"] == f"ecc approve {pending['id']}"
    assert data["deny"] == f"ecc deny {pending['id']} --reason TEXT"
    assert data["expires_at"] == pending["expires_at"]
    excerpt = data["input_excerpt"]
    assert excerpt.startswith("rm -rf node_modules") and len(excerpt) <= 300
    assert "\x1b" not in excerpt and TOKEN not in excerpt and TOKEN not in str(note)
    assert f"ecc approve {pending['id']}" in note["body"]
    assert session in note["title"] and "Bash" in note["title"]

    assert run_ecc("deny", pending["id"]).returncode == 0
    code, _, err = hook.finish()
    assert code == 2 and "denied by" in err, err
    history = run_ecc("notify", "history", "--json")
    assert '"approval_request"' in history.stdout and '"sent"' in history.stdout
