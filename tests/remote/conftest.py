"""A real ``ecc remote serve`` in a subprocess on an ephemeral 127.0.0.1 port, driven over HTTP.

Each server gets its own config/state dirs, token file and allowed root, so tests never share
state with the test process's isolated environment unless they ask to.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ecc.remote.tokens import create_token_file, read_token_file

_DEFAULT = object()
START_TIMEOUT = 60.0


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any
    raw: bytes


@dataclass
class Server:
    proc: subprocess.Popen[str]
    host: str
    port: int
    token: str
    token_file: Path
    root: Path
    env: dict[str, str]
    base: Path
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: Any = _DEFAULT,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        timeout: float = 60.0,
    ) -> Reply:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            sent: dict[str, str] = {}
            token = self.token if token is _DEFAULT else token
            if token is not None:
                sent["Authorization"] = f"Bearer {token}"
            data = raw
            if body is not None:
                data = json.dumps(body).encode()
                sent["Content-Type"] = "application/json"
            sent.update(headers or {})
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
            got = {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()
        parsed: Any = payload
        if got.get("content-type", "").startswith("application/json"):
            parsed = json.loads(payload)
        return Reply(response.status, got, parsed, payload)

    def create(self, task: str, **fields: Any) -> dict[str, Any]:
        body = {"task": task, "repository": str(self.root), "harness": "shell", "worktree": False}
        body.update(fields)
        reply = self.call("POST", "/v1/sessions", body)
        assert reply.status == 201, reply.body
        return reply.body  # type: ignore[no-any-return]

    def wait_state(self, session_id: str, states: set[str], timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            session = self.call("GET", f"/v1/sessions/{session_id}").body
            if session["state"] in states or time.monotonic() > deadline:
                return session  # type: ignore[no-any-return]
            time.sleep(0.05)

    def stop_all(self) -> None:
        try:
            active = self.call("GET", "/v1/sessions", timeout=10).body.get("sessions", [])
            for session in active:
                self.call("POST", f"/v1/sessions/{session['id']}/stop", {"grace": 0}, timeout=30)
        except Exception:
            pass

    def shutdown(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def server_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECC_")}
    home = base / "home"
    for name, sub in {
        "HOME": "home",
        "ECC_CONFIG_DIR": "home/.config/ecc",
        "ECC_STATE_DIR": "home/.local/state/ecc",
        "ECC_DATA_DIR": "home/.local/share/ecc",
        "ECC_CACHE_DIR": "home/.cache/ecc",
        "XDG_CONFIG_HOME": "home/.config",
        "XDG_STATE_HOME": "home/.local/state",
        "XDG_DATA_HOME": "home/.local/share",
        "XDG_CACHE_HOME": "home/.cache",
    }.items():
        env[name] = str(base / sub)
    home.mkdir(parents=True, exist_ok=True)
    return env


def write_config(base: Path, remote: dict[str, Any], extra: str = "") -> Path:
    lines = ["[remote]"]
    for key, value in remote.items():
        lines.append(f"{key} = {json.dumps(value)}")
    config_dir = base / "home/.config/ecc"
    config_dir.mkdir(parents=True, exist_ok=True)
    path = config_dir / "config.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def spawn(
    base: Path,
    args: list[str],
    env: dict[str, str],
) -> tuple[subprocess.Popen[str], list[str], threading.Event, list[int]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecc", "remote", "serve", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    ready = threading.Event()
    port: list[int] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.append(line)
            if "listening on" in line and not ready.is_set():
                port.append(int(line.rsplit(":", 1)[1]))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    return proc, log, ready, port


def launch(
    base: Path,
    *,
    remote: dict[str, Any] | None = None,
    extra_config: str = "",
    extra_args: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
    token_file: Path | None = None,
) -> Server:
    env = server_env(base)
    root = base / "allowed"
    root.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {"allowed_roots": [str(root)], "rate_limit_per_minute": 100000}
    settings.update(remote or {})
    write_config(base, settings, extra_config)
    if token_file is None:
        token_file = create_token_file(base / "server-token", force=True)
    token = read_token_file(token_file, many=True)[0]
    args = ["--port", "0", "--log-level", "warning"]
    if extra_env is None or "ECC_REMOTE_TOKEN" not in extra_env:
        args += ["--token-file", str(token_file)]
    env.update(extra_env or {})
    proc, log, ready, port = spawn(base, [*args, *(extra_args or [])], env)
    if not ready.wait(START_TIMEOUT) or not port:
        proc.kill()
        proc.wait()
        raise AssertionError("server did not start:\n" + "".join(log))
    return Server(proc, "127.0.0.1", port[0], token, token_file, root, env, base, log)


@pytest.fixture
def start_server(tmp_path: Path):
    started: list[Server] = []
    counter = iter(range(100))

    def start(**kwargs: Any) -> Server:
        server = launch(tmp_path / f"server{next(counter)}", **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop_all()
        server.shutdown()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the tests that only read and validate (rate limit far away)."""
    server = launch(
        tmp_path_factory.mktemp("shared"),
        extra_config='[harness_runners.echoer]\nprogram = "/bin/echo"\n'
        '[harness_runners.other]\nprogram = "/bin/true"\n'
        '[agent_profiles.quick]\nharness = "shell"\n'
        '[agent_profiles.secret]\nharness = "shell"\n',
        remote={
            "allowed_harnesses": ["shell", "echoer"],
            "allowed_profiles": ["quick"],
            "max_body_bytes": 4096,
        },
    )
    yield server
    server.stop_all()
    server.shutdown()


def read_sse(response: http.client.HTTPResponse):
    """Yield (event, data, id) frames from an open SSE response."""
    event, data, ident = "message", [], None
    while True:
        raw = response.readline()
        if not raw:
            return
        line = raw.decode().rstrip("\r\n")
        if not line:
            if data:
                yield event, json.loads("\n".join(data)), ident
            event, data, ident = "message", [], None
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(": ")
            if key == "event":
                event = value
            elif key == "data":
                data.append(value)
            elif key == "id":
                ident = value
