"""The create route's answers once the body is valid: a request ecc refuses is 422 ``rejected``
with nothing written; a recorded session its executor could not start is 503 ``not_started``
(the session stays, as failed). In process, so the executor can be made to fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ecc.contract.errors import EccError
from ecc.remote.app import create_app
from ecc.remote.settings import Settings
from ecc.remote.tokens import TokenSet
from ecc.runtime.config.model import get_config
from ecc.sessions import manager

TOKEN = "t" * 43


def _client(root: Path, config) -> TestClient:
    settings = Settings(
        tokens=TokenSet([TOKEN]),
        config=config,
        max_body_bytes=4096,
        rate_limit_per_minute=600,
        read_timeout_secs=5,
        allowed_roots=[root.resolve()],
    )
    return TestClient(create_app(settings), headers={"Authorization": f"Bearer {TOKEN}"})


def _create(client: TestClient, root: Path):
    body = {"task": "true", "repository": str(root), "harness": "shell", "worktree": False}
    return client.post("/v1/sessions", json=body)


def test_a_refused_request_is_422_and_writes_nothing(tmp_path: Path) -> None:
    config = get_config().model_copy(update={"executor": "nowhere"})
    with _client(tmp_path, config) as client:
        reply = _create(client, tmp_path)
        assert reply.status_code == 422, reply.text
        assert reply.json()["error"] == "rejected"
        assert "unknown executor 'nowhere'" in reply.json()["message"]
        listed = client.get("/v1/sessions", params={"all": "true"})
        assert listed.json() == {"sessions": []}


class _Unstartable:
    remote = False

    def submit(self, session) -> None:
        raise EccError("no runner today")


def test_a_session_that_cannot_start_is_503_and_recorded_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(manager, "get_executor", lambda name=None, config=None: _Unstartable())
    with _client(tmp_path, get_config()) as client:
        reply = _create(client, tmp_path)
        assert reply.status_code == 503, reply.text
        sessions = client.get("/v1/sessions", params={"all": "true"}).json()["sessions"]
        assert len(sessions) == 1 and sessions[0]["state"] == "failed"
        assert reply.json() == {
            "error": "not_started",
            "message": f"session {sessions[0]['id']} could not be started: no runner today",
        }
