"""``web.base_url``: each notification about a session carries the link to its web page."""

from __future__ import annotations

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import Notification
from ecc.observability import notify
from ecc.runtime.config.model import Config
from ecc.runtime.plugins import loader as plugins


class Collect:
    def __init__(self) -> None:
        self.seen: list[Notification] = []

    @hookimpl
    def ecc_notify(self, notification: Notification, settings: dict) -> None:
        self.seen.append(notification)


def deliver(cfg: Config, note: Notification) -> Notification:
    collect = Collect()
    name = f"collect{id(collect)}"  # a plugin set is shared by equal configs
    plugins.get_plugins(cfg).pm.register(collect, name=f"ecc.notifiers:{name}")
    assert notify.send(note, cfg, only=name, force=True) == []
    [seen] = collect.seen
    return seen


def test_a_session_notification_links_to_its_page() -> None:
    cfg = Config.model_validate({"web": {"base_url": "https://ecc.example.org:8787/"}})
    note = Notification("approval_request", "approve?", "Bash: rm -rf x", session_id="abc123")
    seen = deliver(cfg, note)
    url = "https://ecc.example.org:8787/web/sessions/abc123"
    assert seen.data["url"] == url and seen.body.endswith(f"\nOpen: {url}")


def test_without_a_base_url_or_a_session_nothing_is_added() -> None:
    plain = deliver(Config(), Notification("session_failed", "t", "b", session_id="abc123"))
    assert "url" not in plain.data and plain.body == "b"
    cfg = Config.model_validate({"web": {"base_url": "https://ecc.example.org"}})
    alert = deliver(cfg, Notification("budget_alert", "t", "b"))
    assert "url" not in alert.data and alert.body == "b"


def test_the_base_url_must_be_http_or_https() -> None:
    import pytest
    from pydantic import ValidationError

    for bad in ("javascript:alert(1)", "ftp://x", "https://", "https://a b"):
        with pytest.raises(ValidationError, match=r"web\.base_url"):
            Config.model_validate({"web": {"base_url": bad}})
