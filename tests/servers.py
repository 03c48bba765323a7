"""Throwaway PostgreSQL and Redis servers for tests: real servers on free loopback ports.

Each server runs from a private temporary directory, is started by the test session that needs
it and is killed by its PID in the fixture's teardown (nothing is left running). As root,
PostgreSQL runs as the unprivileged ``postgres`` user (created by the Debian package) or
``nobody``; ``make test`` installs the Debian packages ``postgresql`` and ``redis-server``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path:
        return on_path
    raise RuntimeError(f"PostgreSQL's {name} is not installed (make test installs postgresql)")


def _stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(timeout=10)


class PostgresServer:
    """``initdb`` + ``postgres`` in a temporary directory, trust auth on 127.0.0.1 only."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="ecc-pg-"))
        self.data = self.dir / "data"
        self.user: str | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                with contextlib.suppress(KeyError):
                    entry = pwd.getpwnam(name)
                    self.user = name
                    os.chown(self.dir, entry.pw_uid, entry.pw_gid)
                    break
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PostgresServer:
        log = open(self.dir / "initdb.log", "wb")  # noqa: SIM115 (closed below)
        try:
            subprocess.run(
                [
                    _pg_bin("initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                ],
                check=True,
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self.user,
                cwd=self.dir,
            )
        finally:
            log.close()
        server_log = open(self.dir / "server.log", "wb")  # noqa: SIM115 (owned by the process)
        self.proc = subprocess.Popen(
            [
                _pg_bin("postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ],
            stdout=server_log,
            stderr=subprocess.STDOUT,
            user=self.user,
            cwd=self.dir,
        )
        server_log.close()
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        "PostgreSQL did not start: " + (self.dir / "server.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.05)

    def new_schema(self) -> str:
        """A fresh schema and the store URL whose search_path selects it (one per test)."""
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return f"{self.url}?options=-csearch_path%3D{name}"

    def drop_schema(self, url: str) -> None:
        """Drop a test's schema. A process of that test may still be starting (a runner the
        test's last command dispatched, not yet recorded to be killed): a deadlock with it
        aborts the drop, so the drop is tried again once that process has moved on."""
        import psycopg

        name = url.rsplit("%3D", 1)[1]
        for attempt in range(20):
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
                return
            except psycopg.errors.DeadlockDetected:
                if attempt == 19:
                    raise
                time.sleep(0.25)

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc, signal.SIGINT)  # fast shutdown
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="ecc-redis-"))
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock,
            ):
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()
