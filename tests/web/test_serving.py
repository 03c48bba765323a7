"""How the pages are served: ``ecc web``'s address rules and its token of last resort, and the
same pages under ``ecc remote serve``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.remote.conftest import Server, server_env, write_config
from tests.remote.test_tls import certificate
from tests.web.conftest import LINK

__all__ = ["certificate"]  # the TLS tests' self-signed certificate fixture


def test_ecc_web_refuses_a_non_loopback_address_without_tls(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ecc", "web", "--host", "0.0.0.0", "--port", "0"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ecc web on 0.0.0.0 (not loopback) needs TLS")
    assert len(done.stderr.strip().splitlines()) == 1


def test_without_a_configured_token_only_the_link_signs_in(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    write_config(tmp_path, {"allowed_roots": [str(tmp_path)]})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecc", "web", "--port", "0"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if LINK.search(line):
                break
        text = "".join(lines)
        assert "the sign-in link is the only way in" in text, text
        assert not (tmp_path / "home/.config/ecc/remote-token").exists()  # nothing written
        link = LINK.search(text).group(1)  # type: ignore[union-attr]
        import http.client

        host, path = link.split("://", 1)[1].split("/", 1)
        conn = http.client.HTTPConnection(*host.split(":"), timeout=30)
        conn.request("GET", "/" + path)
        response = conn.getresponse()
        response.read()
        assert response.status == 303 and "ecc_web=" in response.getheader("set-cookie", "")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_pages_are_served_by_ecc_remote_serve_too(start_server) -> None:
    server: Server = start_server()
    assert server.call("GET", "/web/", token=None).status == 303
    form = f"token={server.token}".encode()
    reply = server.call(
        "POST", "/web/signin", token=None, raw=form,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )  # fmt: skip
    assert reply.status == 303
    found = re.search(r"ecc_web=([^;]+)", reply.headers["set-cookie"])
    assert found is not None
    cookie = found.group(1)
    page = server.call("GET", "/web/", token=None, headers={"Cookie": f"ecc_web={cookie}"})
    assert page.status == 200 and b"<h1>Sessions</h1>" in page.raw
    assert server.call("GET", "/v1/sessions").status == 200  # the API as before
    assert "/web/" not in str(server.call("GET", "/openapi.json").body["paths"])


def test_over_tls_the_cookie_is_secure(start_server, certificate) -> None:
    import http.client
    import ssl

    cert, key = certificate
    server: Server = start_server(extra_args=["--tls-cert", str(cert), "--tls-key", str(key)])
    context = ssl.create_default_context(cafile=str(cert))
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=30)
    try:
        conn.request(
            "POST", "/web/signin", body=f"token={server.token}",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        response = conn.getresponse()
        response.read()
    finally:
        conn.close()
    assert response.status == 303
    cookie = response.getheader("set-cookie", "")
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
