"""The global ``-v``/``--log-level`` and rotating daemon and runner logs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from ecc.runtime import logs
from tests.conftest import ECC, run_ecc
from tests.conventions.conftest import wait_finished


def _logs_dir() -> Path:
    return Path(os.environ["ECC_STATE_DIR"]) / "logs"


def test_log_level_quiets_and_raises(git_repo: Path):
    quiet = run_ecc("--log-level", "error", "daemon", "--once", cwd=git_repo)
    assert quiet.returncode == 0, quiet.stderr
    assert "daemon started" not in quiet.stderr
    normal = run_ecc("daemon", "--once", cwd=git_repo)
    assert "daemon started" in normal.stderr
    bad = run_ecc("--log-level", "loud", "daemon", "--once", cwd=git_repo)
    assert bad.returncode == 2 and "loud" in bad.stderr


def test_verbose_twice_is_debug_in_stderr_and_daemon_log(git_repo: Path):
    daemon = subprocess.Popen(
        [*ECC, "-vv", "daemon", "--interval", "0.05"],
        cwd=git_repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        deadline = time.monotonic() + 20
        log_file = _logs_dir() / "daemon.log"
        while time.monotonic() < deadline:
            if log_file.exists() and "pass took" in log_file.read_text():
                break
            time.sleep(0.05)
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, stderr = daemon.communicate(timeout=20)
    assert "DEBUG" in stderr and "pass took" in stderr
    assert "pass took" in log_file.read_text()


def test_daemon_log_rotates(git_repo: Path):
    directory = _logs_dir()
    directory.mkdir(parents=True, exist_ok=True)
    big = directory / "daemon.log"
    big.write_bytes(b"old line\n" * (logs.MAX_BYTES // 9 + 1))
    result = run_ecc("daemon", "--once", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    assert (directory / "daemon.log.1").stat().st_size >= logs.MAX_BYTES
    assert big.stat().st_size < 10_000 and "daemon started" in big.read_text()


def test_runner_log_rotates_and_keeps_its_backups(git_repo: Path):
    started = run_ecc("start", "--no-worktree", "--harness", "shell", "exit 3", cwd=git_repo)
    session_id = started.stdout.strip()
    assert wait_finished(session_id, git_repo)["state"] == "failed"
    runner_log = _logs_dir() / f"{session_id}.runner.log"
    for _ in range(logs.BACKUPS + 1):
        runner_log.write_bytes(b"x" * (logs.MAX_BYTES + 1))
        resumed = run_ecc("resume", session_id, cwd=git_repo)
        assert resumed.returncode == 0, resumed.stderr
        wait_finished(session_id, git_repo)
    names = sorted(p.name for p in _logs_dir().glob(f"{session_id}.runner.log*"))
    assert names == [f"{session_id}.runner.log"] + [
        f"{session_id}.runner.log.{n}" for n in range(1, logs.BACKUPS + 1)
    ]
    assert runner_log.stat().st_size < logs.MAX_BYTES


def test_log_options_keep_the_fast_start_path(git_repo: Path):
    probe = (
        "import sys\n"
        "sys.argv = ['ecc', '-vv', 'run', '-d', '--no-worktree', '--harness', 'shell', 'true']\n"
        "from ecc.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    import os\n"
        "    print('click' in sys.modules, os.environ.get('ECC_LOG_LEVEL'), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [ECC[0], "-c", probe], cwd=git_repo, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "False debug"
    wait_finished(result.stdout.strip(), git_repo)


def test_each_line_is_logged_once(git_repo: Path, tmp_path: Path):
    daemon = run_ecc("-v", "daemon", "--once", cwd=git_repo)
    assert daemon.stderr.count("daemon started") == 1, daemon.stderr
    token = tmp_path / "token"
    token.write_text("z" * 40 + "\n")
    token.chmod(0o600)
    server = subprocess.Popen(
        [*ECC, "-v", "remote", "serve", "--port", "0", "--token-file", str(token), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    try:
        assert server.stdout is not None and server.stdout.readline()  # listening
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=20)
    assert stderr.count("token(s) from") == 1, stderr
