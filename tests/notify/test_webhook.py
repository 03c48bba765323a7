"""The webhook notifier against a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ecc.contract.types import Notification
from ecc_plugins import webhook_notifier
from tests.conftest import run_ecc

SECRET = "T0KEN-s3cr3t-9f8e7d"


class Receiver:
    """Records each POST; answers with the next status of ``statuses`` (then 200)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self.hang = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "json": json.loads(body)}
                )
                if receiver.hang.is_set():
                    receiver.release.wait(10)
                    return
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


NOTE = Notification(
    event="session_failed",
    title="ecc session abc123 failed",
    body="exit 1 <@everyone> `code`",
    session_id="abc123",
    data={"exit_code": 1},
)


def deliver(monkeypatch: pytest.MonkeyPatch, url: str, **settings: object) -> None:
    monkeypatch.setenv("ECC_TEST_WEBHOOK", url)
    webhook_notifier.ecc_notify(NOTE, {"url_env": "ECC_TEST_WEBHOOK", **settings})


def test_slack_payload(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    deliver(monkeypatch, receiver.url(), format="slack")
    (request,) = receiver.requests
    assert request["json"] == {"text": "*ecc session abc123 failed*\nexit 1 <@everyone> `code`"}
    assert request["headers"]["Content-Type"] == "application/json"


def test_discord_payload_disables_mentions(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    deliver(monkeypatch, receiver.url(), format="discord")
    (request,) = receiver.requests
    assert request["json"] == {
        "content": "**ecc session abc123 failed**\nexit 1 <@everyone> `code`",
        "allowed_mentions": {"parse": []},
    }


def test_generic_payload(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    deliver(monkeypatch, receiver.url())
    payload = receiver.requests[0]["json"]
    assert payload["source"] == "ecc"
    assert payload["event"] == "session_failed"
    assert payload["session_id"] == "abc123"
    assert payload["data"] == {"exit_code": 1}
    assert payload["title"] == NOTE.title and payload["body"] == NOTE.body


def test_retries_a_500_then_succeeds(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver.statuses = [500, 503]
    deliver(monkeypatch, receiver.url(), retries=2, backoff=0.01)
    assert len(receiver.requests) == 3


def test_gives_up_after_the_retries(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver.statuses = [500, 500, 500]
    with pytest.raises(webhook_notifier.WebhookError, match=r"3 attempt.*HTTP 500"):
        deliver(monkeypatch, receiver.url(), retries=2, backoff=0.01)
    assert len(receiver.requests) == 3


def test_a_4xx_is_not_retried(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver.statuses = [404]
    with pytest.raises(webhook_notifier.WebhookError, match="HTTP 404"):
        deliver(monkeypatch, receiver.url(), retries=3, backoff=0.01)
    assert len(receiver.requests) == 1


def test_times_out_on_a_hanging_server(receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    receiver.hang.set()
    with pytest.raises(webhook_notifier.WebhookError, match="no answer within"):
        deliver(monkeypatch, receiver.url(), timeout=0.3, retries=1, backoff=0.01)
    assert len(receiver.requests) == 2  # the retry was attempted too


def test_url_from_a_file(receiver: Receiver, tmp_path: Path) -> None:
    url_file = tmp_path / "slack-url"
    url_file.write_text(receiver.url("/from-file") + "\n")
    webhook_notifier.ecc_notify(NOTE, {"url_file": str(url_file), "format": "slack"})
    assert receiver.requests[0]["path"] == "/from-file"


def test_several_targets_one_failing_does_not_stop_the_next(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOD_URL", receiver.url("/good"))
    monkeypatch.setenv("BAD_URL", "ftp://127.0.0.1/x")
    targets = [{"url_env": "BAD_URL"}, {"url_env": "GOOD_URL", "format": "discord"}]
    with pytest.raises(webhook_notifier.WebhookError, match=r"\$BAD_URL must be an http"):
        webhook_notifier.ecc_notify(NOTE, {"targets": targets})
    assert [r["path"] for r in receiver.requests] == ["/good"]


def test_a_url_in_config_is_refused() -> None:
    with pytest.raises(webhook_notifier.WebhookError, match="secret"):
        webhook_notifier.ecc_notify(NOTE, {"url": "https://hooks.example/x"})


def test_missing_env_is_reported_by_name_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_URL", raising=False)
    with pytest.raises(webhook_notifier.WebhookError, match=r"\$NOT_SET_URL is not set"):
        webhook_notifier.ecc_notify(NOTE, {"url_env": "NOT_SET_URL"})


def write_user_config(isolated_env: Path, text: str) -> None:
    path = isolated_env / ".config/ecc/config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_no_secret_in_logs_store_or_config_show(receiver: Receiver, isolated_env: Path) -> None:
    write_user_config(
        isolated_env,
        '[notifications]\nnotifiers = ["log", "webhook"]\n'
        '[notifications.settings.webhook]\nurl_env = "ECC_SLACK_URL"\nformat = "slack"\n'
        "retries = 1\nbackoff = 0.01\n",
    )
    secret_url = receiver.url(f"/services/{SECRET}")
    env = {"ECC_SLACK_URL": secret_url}
    receiver.statuses = [500, 500]
    failed = run_ecc("notify", "test", env=env)
    assert failed.returncode == 1
    assert "webhook" in failed.stderr and "HTTP 500" in failed.stderr
    ok = run_ecc("notify", "test", "--json", env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["delivery"] == {"log": "sent", "webhook": "sent"}
    assert receiver.requests[-1]["json"]["text"].startswith("*ecc: test notification*")
    shown = run_ecc("config", "show", env=env)
    history = run_ecc("notify", "history", "--json", env=env)
    assert len(json.loads(history.stdout)) == 2
    log_file = isolated_env / ".local/state/ecc/notifications.jsonl"
    everything = (
        failed.stdout + failed.stderr + ok.stdout + ok.stderr + shown.stdout + history.stdout
    )
    everything += log_file.read_text()
    assert "ECC_SLACK_URL" in shown.stdout
    assert SECRET not in everything
    state = isolated_env / ".local/state/ecc"
    stored = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.name == "ecc.db" for p in stored)
    assert not [p for p in stored if SECRET.encode() in p.read_bytes()]
