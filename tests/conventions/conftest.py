"""Fixtures for the everyday-conventions tests: a pty to stand for a terminal, and sessions
that are waited for so no runner outlives its test."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.conftest import ECC, run_ecc


def run_on_terminal(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 30
) -> tuple[int, str]:
    """Run ``ecc ARGS`` with stdout (and stderr) on a pseudo-terminal; returns (status, text)."""
    leader, follower = pty.openpty()
    full_env = {**os.environ, **(env or {})}
    process = subprocess.Popen(
        [*ECC, *args],
        cwd=cwd,
        env=full_env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif process.poll() is not None:
            break
    os.close(leader)
    status = process.wait(timeout=timeout)
    return status, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def wait_finished(session_id: str, cwd: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        result = run_ecc("status", session_id, "--json", cwd=cwd)
        status = json.loads(result.stdout)
        if status["state"] in ("completed", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)
