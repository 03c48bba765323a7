"""``--json`` on every command that prints, and the few justified exceptions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import click

from ecc.cli.app import cli
from tests.conftest import ECC, run_ecc

# Commands without --json, each for a reason: what they print is not data.
NOT_DATA = {
    "completion": "prints a shell script for eval",
    "dashboard": "a full-screen terminal application",
    "web": "serves pages to a browser; its sign-in link is a secret for the terminal only",
    "hook": "speaks the harness's hook protocol on stdout",
    "run-session": "the runner ecc spawns; it prints nothing",
    "memory help": "prints the memory commands' guide for agents",
    "worker": "a celery worker process: its log is celery's",
    "install": "runs pip, which prints its own progress; the exit status is pip's",
    "uninstall": "runs pip, which prints its own progress; the exit status is pip's",
}


def _leaf_commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None:
                continue
            path = f"{prefix} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, path, click.Context(command, parent=ctx, info_name=name))
            else:
                found[path] = command

    walk(cli, "", click.Context(cli, info_name="ecc"))
    return found


def test_every_command_that_prints_has_json():
    commands = _leaf_commands()
    missing = sorted(
        path
        for path, command in commands.items()
        if path not in NOT_DATA
        and "--json" not in {opt for param in command.params for opt in getattr(param, "opts", [])}
    )
    assert missing == []
    assert set(NOT_DATA) - set(commands) <= {"worker"}  # worker comes with the celery plugin


def test_config_set_json(git_repo: Path):
    result = run_ecc("config", "set", "risk.block", "0.95", "--user", "--json", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["key"] == "risk.block" and data["value"] == 0.95
    assert Path(data["path"]).is_file()


def test_remote_remove_json(tmp_path: Path):
    token = tmp_path / "token"
    token.write_text("x" * 40 + "\n")
    token.chmod(0o600)
    added = run_ecc("remote", "add", "lo", "http://127.0.0.1:9", "--token-file", str(token))
    assert added.returncode == 0, added.stderr
    result = run_ecc("remote", "remove", "lo", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"name": "lo", "removed": True}


def test_remote_serve_json_prints_where_it_listens(tmp_path: Path):
    token = tmp_path / "token"
    token.write_text("y" * 40 + "\n")
    token.chmod(0o600)
    server = subprocess.Popen(
        [*ECC, "remote", "serve", "--port", "0", "--token-file", str(token), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=os.environ,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        data = json.loads(line)
        assert data["url"].startswith("http://127.0.0.1:")
        assert data["pid"] == server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    time.sleep(0)
