"""A real ``ecc web`` in a subprocess on an ephemeral 127.0.0.1 port, its sign-in link read from
its stderr, and a small cookie-keeping HTTP client for the pages."""

from __future__ import annotations

import http.client
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from ecc.remote.tokens import create_token_file, read_token_file
from tests.remote.conftest import server_env, start_server, write_config

__all__ = ["start_server"]  # the remote tests' fixture: ecc remote serve serves the pages too

START_TIMEOUT = 60.0
LINK = re.compile(r"sign in at (http://\S+)")


@dataclass
class Page:
    status: int
    headers: dict[str, str]
    text: str


@dataclass
class Web:
    proc: subprocess.Popen[str]
    port: int
    link: str
    token: str
    root: Path
    env: dict[str, str]
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        *,
        cookie: str | None = None,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Page:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = dict(headers or {})
        body = None
        if cookie:
            sent["Cookie"] = f"ecc_web={cookie}"
        if form is not None:
            body = urlencode(form).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            text = response.read().decode("utf-8", "replace")
            got: dict[str, str] = {}
            for key, value in response.getheaders():
                key = key.lower()
                got[key] = f"{got[key]}\n{value}" if key in got else value
        finally:
            conn.close()
        return Page(response.status, got, text)

    def sign_in(self) -> str:
        """A session cookie value, from the token typed into the form."""
        page = self.request("POST", "/web/signin", form={"token": self.token})
        assert page.status == 303, page.text
        match = re.search(r"ecc_web=([^;]+)", page.headers.get("set-cookie", ""))
        assert match, page.headers
        return match.group(1)

    def csrf(self, cookie: str, path: str = "/web/") -> str:
        page = self.request("GET", path, cookie=cookie)
        match = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert match, page.text
        return match.group(1)

    def shutdown(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def launch_web(
    base: Path, *, extra_env: dict[str, str] | None = None, extra_config: str = ""
) -> Web:
    env = server_env(base)
    env.update(extra_env or {})
    root = base / "allowed"
    root.mkdir(parents=True, exist_ok=True)
    write_config(base, {"allowed_roots": [str(root)]}, extra_config)
    token_file = create_token_file(base / "server-token", force=True)
    token = read_token_file(token_file)[0]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecc", "web", "--port", "0", "--token-file", str(token_file)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    ready = threading.Event()
    found: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            log.append(line)
            match = LINK.search(line)
            if match and not ready.is_set():
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(START_TIMEOUT) or not found:
        proc.kill()
        proc.wait()
        raise AssertionError("ecc web did not start:\n" + "".join(log))
    port = int(found[0].split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    return Web(proc, port, found[0], token, root, env, log)


@pytest.fixture
def web(tmp_path: Path):
    server = launch_web(tmp_path / "web")
    yield server
    server.shutdown()


def run_in(web: Web, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The ``ecc`` CLI against the server's own state (its store, config)."""
    return subprocess.run(
        [sys.executable, "-m", "ecc", *args],
        env=web.env,
        cwd=web.root,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_for(check: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")
