"""``ecc doctor``: harness CLIs, hooks and MCP entries per harness, the daemon, notifiers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import ECC, run_ecc


def _bin(tmp_path: Path) -> dict[str, str]:
    """A PATH with git and a fake ``claude`` (version 9.9.9) and no other harness CLI."""
    directory = tmp_path / "bin"
    directory.mkdir()
    fake = directory / "claude"
    fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "9.9.9 (Claude Code)"\n')
    fake.chmod(0o755)
    return {"PATH": f"{directory}:/usr/bin:/bin"}


def _doctor(cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, dict]]:
    result = run_ecc("doctor", "--json", cwd=cwd, env=env)
    report = json.loads(result.stdout)
    return result.returncode, {check["name"]: check for check in report["checks"]}


def test_harness_cli_hooks_and_mcp_per_harness(git_repo: Path, tmp_path: Path):
    env = _bin(tmp_path)
    installed = run_ecc("hooks", "install", "--harness", "claude", "--user", cwd=git_repo, env=env)
    assert installed.returncode == 0, installed.stderr
    _, checks = _doctor(git_repo, env)
    claude = checks["harness claude"]
    assert claude["ok"] and "9.9.9 (Claude Code)" in claude["detail"]
    codex = checks["harness codex"]
    assert codex["level"] == "warn" and "not on PATH" in codex["detail"]
    assert codex["fix"]
    hooks = checks["hooks claude"]
    assert hooks["ok"] and "user" in hooks["detail"]
    assert "hooks codex" not in checks  # no CLI, nothing to integrate with
    mcp = checks["mcp claude"]
    assert mcp["level"] == "warn" and "ecc mcp install --harness claude" in mcp["fix"]


def test_daemon_is_reported_with_its_pid(git_repo: Path, tmp_path: Path):
    env = _bin(tmp_path)
    _, checks = _doctor(git_repo, env)
    assert checks["daemon"]["level"] == "warn" and "ecc daemon" in checks["daemon"]["fix"]
    daemon = subprocess.Popen(
        [*ECC, "daemon"],
        cwd=git_repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            _, checks = _doctor(git_repo, env)
            if checks["daemon"]["ok"]:
                break
            time.sleep(0.1)
        assert checks["daemon"]["ok"] and str(daemon.pid) in checks["daemon"]["detail"]
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.communicate(timeout=20)


def test_a_notifiers_missing_program_fails_with_a_fix(git_repo: Path, tmp_path: Path):
    env = _bin(tmp_path)
    config = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[notifications]\nnotifiers = ["desktop"]\n')
    status, checks = _doctor(git_repo, env)
    desktop = checks["notifier desktop"]
    assert not desktop["ok"] and desktop["level"] == "fail"
    assert "notify-send" in desktop["detail"] and desktop["fix"]
    assert status == 1
    text = run_ecc("doctor", cwd=git_repo, env=env).stdout
    assert "FAIL notifier desktop" in text and "fix:" in text


def test_a_webhook_without_its_url_fails_and_the_url_never_shows(git_repo: Path, tmp_path: Path):
    env = _bin(tmp_path)
    config = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[notifications]\nnotifiers = ["webhook"]\n'
        '[notifications.settings.webhook]\nurl_env = "ECC_TEST_WEBHOOK"\n'
    )
    status, checks = _doctor(git_repo, env)
    webhook = checks["notifier webhook"]
    assert status == 1 and not webhook["ok"] and "$ECC_TEST_WEBHOOK" in webhook["detail"]
    assert webhook["fix"]
    secret = "https://hooks.example.invalid/T000/SECRET-PART"
    result = run_ecc("doctor", "--json", cwd=git_repo, env={**env, "ECC_TEST_WEBHOOK": secret})
    report = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert report["notifier webhook"]["ok"]
    assert "SECRET-PART" not in result.stdout + result.stderr


def test_plugins_report_through_the_doctor_hook_and_a_broken_one_is_contained(monkeypatch):
    """``ecc_doctor_checks`` is a hook of the contract: a plugin registered like any other
    reports its own line; one that raises, or answers nonsense, is a failed line of its own."""
    import sys
    import types

    from ecc.cli import doctor_checks
    from ecc.contract.hookspecs import hookimpl
    from ecc.runtime.plugins import loader

    good = types.ModuleType("ecc_test_doctor_good")
    good.ecc_doctor_checks = hookimpl(
        lambda config: [{"name": "acme cli", "level": "warn", "detail": "old", "fix": "upgrade"}]
    )
    broken = types.ModuleType("ecc_test_doctor_broken")

    def explode(config):
        raise RuntimeError("boom")

    broken.ecc_doctor_checks = hookimpl(explode)
    odd = types.ModuleType("ecc_test_doctor_odd")
    odd.ecc_doctor_checks = hookimpl(lambda config: [{"level": "fine"}])
    for module in (good, broken, odd):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    plugin_set = loader.PluginSet(
        None,
        entry_points={
            "ecc.notifiers": [
                ("acme", good.__name__),
                ("broken", broken.__name__),
                ("odd", odd.__name__),
            ]
        },
    )
    monkeypatch.setattr(loader, "get_plugins", lambda config=None: plugin_set)
    checks = {c.name: c for c in doctor_checks.plugin_checks(None)}
    assert checks["acme cli"].ok and checks["acme cli"].level == "warn"
    assert checks["acme cli"].fix == "upgrade"
    assert not checks["plugin broken"].ok and "boom" in checks["plugin broken"].detail
    assert not checks["plugin odd"].ok and "fine" in checks["plugin odd"].detail
