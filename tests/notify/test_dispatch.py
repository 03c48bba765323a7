"""Dispatch to notifiers: isolation of failures, filters, quiet hours, records, desktop argv."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from ecc.contract.errors import ConfigError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import Notification
from ecc.observability import notify
from ecc.runtime.config import quiet_hours
from ecc.runtime.config.model import Config
from ecc.runtime.plugins import loader as plugins
from ecc.store.open import default_path, open_store
from ecc_plugins import desktop_notifier
from tests.conftest import run_ecc

NOTE = Notification(event="session_completed", title="done", body="session s1 completed")


class Boom:
    @hookimpl
    def ecc_notify(self, notification: Notification, settings: dict) -> None:
        raise RuntimeError("boom")


class Collect:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict]] = []

    @hookimpl
    def ecc_notify(self, notification: Notification, settings: dict) -> None:
        self.seen.append((notification.event, settings))


def config(**notifications: object) -> Config:
    return Config.model_validate({"notifications": {"notifiers": ["log"], **notifications}})


def with_plugins(cfg: Config, **extra: object) -> None:
    plugin_set = plugins.get_plugins(cfg)
    for name, plugin in extra.items():
        plugin_set.pm.register(plugin, name=f"ecc.notifiers:{name}")


def recorded() -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_notifications()


def log_lines() -> list[dict]:
    path = Path(os.environ["ECC_STATE_DIR"]) / "notifications.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_failing_notifier_does_not_stop_the_others_and_all_is_recorded() -> None:
    cfg = config(settings={"collect": {"channel": "#ops"}})
    collect = Collect()
    with_plugins(cfg, boom=Boom(), collect=collect)
    failed = notify.send(NOTE, cfg)
    assert failed == ["boom"]
    assert collect.seen == [("session_completed", {"channel": "#ops"})]
    assert [line["event"] for line in log_lines()] == ["session_completed"]
    (row,) = recorded()
    assert row["event"] == "session_completed" and row["title"] == "done"
    assert row["data"]["delivery"]["boom"].startswith("failed: RuntimeError: boom")
    assert row["data"]["delivery"]["collect"] == "sent"
    assert row["data"]["delivery"]["log"] == "sent"


def test_a_notifier_taking_fewer_arguments_gets_the_ones_it_names() -> None:
    class TitleOnly:  # the contract lets an implementation take fewer arguments than its spec
        def __init__(self) -> None:
            self.titles: list[str] = []

        @hookimpl
        def ecc_notify(self, notification: Notification) -> None:
            self.titles.append(notification.title)

    cfg = config()
    title_only = TitleOnly()
    with_plugins(cfg, title_only=title_only)
    assert notify.send(NOTE, cfg) == []
    assert title_only.titles == ["done"]
    assert recorded()[0]["data"]["delivery"]["title_only"] == "sent"


def test_a_hanging_notifier_is_abandoned_at_its_deadline() -> None:
    class Hang:
        @hookimpl
        def ecc_notify(self, notification: Notification, settings: dict) -> None:
            time.sleep(30)

    cfg = config(settings={"hang": {"deadline": 0.2}})
    with_plugins(cfg, hang=Hang())
    assert notify.send(NOTE, cfg) == ["hang"]
    assert recorded()[0]["data"]["delivery"]["hang"] == "failed: timed out"
    assert log_lines()  # the log notifier still delivered


def test_global_and_per_notifier_event_filters() -> None:
    cfg = config(events=["session_failed"], settings={"collect": {"events": ["session_failed"]}})
    collect = Collect()
    with_plugins(cfg, collect=collect)
    notify.send(NOTE, cfg)  # session_completed is filtered out globally
    assert collect.seen == [] and log_lines() == []
    assert recorded()[0]["data"]["delivery"] == {"*": "filtered"}
    cfg2 = config(settings={"collect": {"events": ["session_failed"]}})
    plugins.reset()
    with_plugins(cfg2, collect=collect)
    notify.send(NOTE, cfg2)
    assert collect.seen == []
    assert [line["event"] for line in log_lines()] == ["session_completed"]
    assert recorded()[-1]["data"]["delivery"]["collect"] == "filtered"


def at(hour: int, minute: int = 0) -> time.struct_time:
    return time.struct_time((2026, 1, 1, hour, minute, 0, 3, 1, 0))


@pytest.mark.parametrize(
    ("window", "hour", "quiet"),
    [
        ("22-8", 23, True),
        ("22-8", 7, True),
        ("22-8", 14, False),
        ("22:00-08:00", 8, False),
        ("9-17", 10, True),
        ("9-17", 18, False),
        ("09:30-09:30", 9, False),
    ],
)
def test_quiet_hours_windows(window: str, hour: int, quiet: bool) -> None:
    assert quiet_hours.in_quiet_hours(window, at(hour)) is quiet


def test_invalid_quiet_hours_are_a_config_error() -> None:
    for bad in ("25-8", "evening", "22:75-08:00"):
        with pytest.raises(ValueError):
            quiet_hours.parse_quiet_hours(bad)
    done = run_ecc("-c", "notifications.quiet_hours=lunch", "notify", "test")
    assert done.returncode == 1 and "quiet hours 'lunch'" in done.stderr
    assert isinstance(ConfigError("x"), Exception)


def test_quiet_hours_silence_all_but_log_and_opt_outs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notify, "in_quiet_hours", lambda text, now=None: bool(text))
    cfg = config(quiet_hours="22-8", settings={"pager": {"ignore_quiet_hours": True}})
    quiet, pager = Collect(), Collect()
    with_plugins(cfg, quiet=quiet, pager=pager)
    notify.send(NOTE, cfg)
    assert quiet.seen == [] and len(pager.seen) == 1
    assert len(log_lines()) == 1
    delivery = recorded()[0]["data"]["delivery"]
    assert delivery == {"log": "sent", "quiet": "quiet_hours", "pager": "sent"}


def test_send_never_raises_even_with_a_broken_store(isolated_env: Path) -> None:
    blocker = isolated_env / "file"
    blocker.write_text("")
    cfg = Config.model_validate({"store": {"url": str(blocker / "ecc.db")}})
    assert notify.send(NOTE, cfg) == []
    assert log_lines()


def fake_notify_send(directory: Path, exit_code: int = 0) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    record = directory / "argv.json"
    script = directory / "notify-send"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


def test_desktop_passes_text_as_argv_never_through_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = fake_notify_send(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    nasty = Notification(
        event="approval_request", title='-t "$(touch pwned)"', body="line1\nline2\x07; rm -rf ~"
    )
    desktop_notifier.ecc_notify(nasty, {})
    argv = json.loads(record.read_text())
    assert argv == ["--app-name=ecc", "--", '-t "$(touch pwned)"', "line1\nline2 ; rm -rf ~"]
    assert not (Path.cwd() / "pwned").exists()


def test_desktop_failure_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_notify_send(tmp_path / "bin", exit_code=3)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(RuntimeError, match="exit status 3"):
        desktop_notifier.ecc_notify(NOTE, {})


def test_macos_command_keeps_text_out_of_the_script() -> None:
    argv = desktop_notifier.command('say "hi" \\ end', 'body "quoted"', platform="darwin")
    assert argv[0] == "osascript"
    assert argv[-2:] == ['say "hi" \\ end', 'body "quoted"']
    script = " ".join(argv[1:-2])
    assert "quoted" not in script and "item 1 of argv" in script
    with pytest.raises(RuntimeError, match="not supported"):
        desktop_notifier.command("t", "b", platform="win32")


def test_notify_test_cli_for_one_unselected_notifier(tmp_path: Path) -> None:
    record = fake_notify_send(tmp_path / "bin")
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    done = run_ecc("notify", "test", "--notifier", "desktop", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"delivery": {"desktop": "sent"}}
    assert json.loads(record.read_text())[2] == "ecc: test notification"
    missing = run_ecc("notify", "test", "--notifier", "nosuch")
    assert missing.returncode == 1 and "nosuch" in missing.stderr
