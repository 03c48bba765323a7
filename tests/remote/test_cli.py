"""``ecc remote token|add|list|remove`` and ``ecc run|start|sessions|logs|stop --remote``."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from ecc.remote.tokens import TokenSet, parse_authorization, read_token_file
from tests.conftest import run_ecc
from tests.remote.conftest import Server


def test_token_command_writes_a_private_file_and_never_prints_the_token(isolated_env) -> None:
    result = run_ecc("remote", "token", "--json")
    assert result.returncode == 0, result.stderr
    path = Path(json.loads(result.stdout)["token_file"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = read_token_file(path)[0]
    assert len(token) >= 40
    assert token not in result.stdout + result.stderr
    again = run_ecc("remote", "token")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert read_token_file(path)[0] == token
    forced = run_ecc("remote", "token", "--force")
    assert forced.returncode == 0
    assert read_token_file(path)[0] != token


def test_add_list_remove_store_only_the_token_path(isolated_env, tmp_path: Path) -> None:
    token_file = tmp_path / "tok"
    token_file.write_text("s" * 40 + "\n")
    token_file.chmod(0o600)
    added = run_ecc("remote", "add", "box", "http://127.0.0.1:9/", "--token-file", str(token_file))
    assert added.returncode == 0, added.stderr
    listed = json.loads(run_ecc("remote", "list", "--json").stdout)
    assert listed == [
        {"name": "box", "url": "http://127.0.0.1:9", "token_file": str(token_file), "ca_file": None}
    ]
    stored = (isolated_env / ".config/ecc/remotes.json").read_text()
    assert "s" * 40 not in stored
    assert run_ecc("remote", "remove", "box").returncode == 0
    assert json.loads(run_ecc("remote", "list", "--json").stdout) == []


def test_add_refuses_bad_urls_names_and_loose_token_files(isolated_env, tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.write_text("g" * 40)
    good.chmod(0o600)
    loose = tmp_path / "loose"
    loose.write_text("l" * 40)
    loose.chmod(0o644)
    cases = [
        (["box", "ftp://host", "--token-file", str(good)], "must be http"),
        (["box", "http://user:pw@host", "--token-file", str(good)], "credentials"),
        (["bad name", "http://host", "--token-file", str(good)], "remote name"),
        (["box", "http://host", "--token-file", str(loose)], "chmod 600"),
        (["box", "http://host", "--token-file", str(tmp_path / "none")], "cannot read"),
    ]
    for args, message in cases:
        result = run_ecc("remote", "add", *args)
        assert result.returncode == 1, args
        assert message in result.stderr, (args, result.stderr)


def test_run_sessions_logs_stop_over_a_remote(start_server, isolated_env) -> None:
    server: Server = start_server()
    add = run_ecc("remote", "add", "lo", server.url, "--token-file", str(server.token_file))
    assert add.returncode == 0, add.stderr
    root = str(server.root)

    run = run_ecc(
        "run",
        "--remote",
        "lo",
        "--harness",
        "shell",
        "--no-worktree",
        "--cwd",
        root,
        "echo hello; echo oops >&2; exit 3",
    )
    assert run.returncode == 3, run.stderr
    assert run.stdout == "hello\n"
    assert "oops" in run.stderr
    session_id = re.search(r"Session ([0-9a-f]{12}) started", run.stderr).group(1)

    listed = json.loads(run_ecc("sessions", "--remote", "lo", "--all", "--json").stdout)
    assert [s["state"] for s in listed if s["id"] == session_id] == ["failed"]
    text = run_ecc("sessions", "--remote", "lo", "--state", "failed").stdout
    assert session_id in text

    logs = run_ecc("logs", "--remote", "lo", session_id)
    assert (logs.returncode, logs.stdout, logs.stderr.strip()) == (0, "hello\n", "oops")
    logs_json = json.loads(run_ecc("logs", "--remote", "lo", session_id, "--json").stdout)
    assert [row["line"] for row in logs_json] == ["hello", "oops"]
    followed = run_ecc("logs", "--remote", "lo", "-f", "--tail", "1", session_id)
    assert followed.returncode == 0 and followed.stderr.strip() == "oops"

    again = run_ecc("stop", "--remote", "lo", session_id)
    assert again.returncode == 1 and "already failed" in again.stderr

    started = run_ecc(
        "start",
        "--remote",
        "lo",
        "--harness",
        "shell",
        "--no-worktree",
        "--cwd",
        root,
        "--json",
        "echo started; exec sleep 600",
    )
    assert started.returncode == 0, started.stderr
    long_id = json.loads(started.stdout)["id"]
    server.wait_state(long_id, {"running"})
    follow = run_ecc("logs", "--remote", "lo", long_id, "--tail", "5")
    assert follow.stdout == "started\n"
    stopped = run_ecc("stop", "--remote", "lo", long_id, "--grace", "1", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["state"] == "stopped"


def test_remote_errors_are_one_line_with_the_server_message(start_server, tmp_path) -> None:
    server: Server = start_server()
    wrong = tmp_path / "wrong"
    wrong.write_text("w" * 40)
    wrong.chmod(0o600)
    assert run_ecc("remote", "add", "bad", server.url, "--token-file", str(wrong)).returncode == 0
    result = run_ecc("sessions", "--remote", "bad")
    assert result.returncode == 1
    assert result.stderr.strip() == "Error: remote bad: the bearer token is not valid (HTTP 401)"
    assert run_ecc("remote", "add", "ok", server.url, "--token-file", str(server.token_file))
    outside = run_ecc("run", "--remote", "ok", "--cwd", "/", "--harness", "shell", "echo x")
    assert outside.returncode == 1
    assert "outside remote.allowed_roots (HTTP 403)" in outside.stderr
    unknown = run_ecc("sessions", "--remote", "nosuch")
    assert unknown.returncode == 1 and "unknown remote 'nosuch'" in unknown.stderr


def test_token_set_and_header_parsing() -> None:
    tokens = TokenSet(["a" * 20, "b" * 20])
    assert tokens.match(b"a" * 20) is not None
    assert tokens.match(b"b" * 20) not in (None, tokens.match(b"a" * 20))
    assert tokens.match(b"a" * 19) is None
    assert tokens.match(b"") is None
    assert parse_authorization(b"Bearer tok") == b"tok"
    assert parse_authorization(b"bearer   tok  ") == b"tok"
    for bad in (None, b"", b"Bearer", b"Basic tok", b"Bearer a b", b"Bearer " + b"x" * 600):
        assert parse_authorization(bad) is None


def test_rate_limiter_refills_with_its_clock() -> None:
    from ecc.remote.guard import RateLimiter

    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    assert [limiter.take("k") for _ in range(60)] == [0.0] * 60
    assert limiter.take("k") > 0
    now[0] += 1.0  # one unit a second at 60/min
    assert limiter.take("k") == 0.0
    assert limiter.take("k") > 0
    assert limiter.take("other") == 0.0
