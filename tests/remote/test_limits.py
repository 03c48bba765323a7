"""Limits a server left running needs: body size, slow clients, rate limit, bind rules."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import run_ecc
from tests.remote.conftest import Server, server_env, write_config

# The socket timeout only bounds a broken test; the server's own deadline (1 s) must fire first.
SOCKET_TIMEOUT = 30.0


def _raw(server: Server, payload: bytes) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=SOCKET_TIMEOUT)
    sock.sendall(payload)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def _auth(server: Server) -> bytes:
    return f"Authorization: Bearer {server.token}\r\n".encode()


def test_declared_huge_body_is_413_before_it_is_sent(start_server) -> None:
    server = start_server(remote={"max_body_bytes": 1024})
    sock = _raw(
        server,
        b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\n" + _auth(server) + b"Content-Type: "
        b"application/json\r\nContent-Length: 50000000\r\n\r\n",
    )
    with sock:
        data = _read_all(sock)  # returns only because the server answers and closes
    assert data.startswith(b"HTTP/1.1 413 ")
    assert b'"error":"body_too_large"' in data
    assert b"connection: close" in data.lower()


def test_chunked_body_over_the_limit_is_413(start_server) -> None:
    server = start_server(remote={"max_body_bytes": 1024})
    chunk = b"x" * 1000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
    sock = _raw(
        server,
        b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\n" + _auth(server) + b"Content-Type: "
        b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
    )
    with sock:
        data = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 413 ")


def test_body_just_under_the_limit_is_read(start_server) -> None:
    server = start_server(remote={"max_body_bytes": 1024})
    padding = "p" * 700
    reply = server.call("POST", "/v1/sessions", {"task": padding, "repository": "/nowhere"})
    assert reply.status == 403  # read and judged on its content, not refused for size


def test_slow_body_gets_408_and_does_not_stall_others(start_server) -> None:
    server = start_server(remote={"read_timeout_secs": 1})
    slow = _raw(
        server,
        b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\n" + _auth(server) + b"Content-Type: "
        b"application/json\r\nContent-Length: 100\r\n\r\n" + b'{"task": ',
    )
    with slow:
        # while the slow client holds its connection, others are served
        assert server.call("GET", "/v1/health", token=None).status == 200
        assert server.call("GET", "/v1/sessions").status == 200
        data = _read_all(slow)
    assert data.startswith(b"HTTP/1.1 408 ")
    assert b'"error":"request_timeout"' in data


def test_slow_headers_are_cut_off(start_server) -> None:
    server = start_server(remote={"read_timeout_secs": 1})
    slow = _raw(server, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")  # never finishes headers
    with slow:
        assert server.call("GET", "/v1/health", token=None).status == 200
        data = _read_all(slow)
    assert data == b""  # closed by the server without a response


def test_slow_headers_on_a_kept_alive_connection_are_cut_off(start_server) -> None:
    server = start_server(remote={"read_timeout_secs": 1})
    sock = _raw(server, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    with sock:
        first = b""
        while not first.endswith(b'{"ok":true}'):
            chunk = sock.recv(65536)
            assert chunk, first
            first += chunk
        assert first.startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"GET /v1/health HTTP/1.1\r\n")  # second request, headers never end
        data = _read_all(sock)
    assert data == b""


def test_oversized_headers_are_refused(start_server) -> None:
    server = start_server()
    sock = _raw(
        server,
        b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n",
    )
    with sock:
        data = _read_all(sock)
    assert data.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 431 "))


def test_rate_limit_per_token(start_server, tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    one, two = "token-one-" + "1" * 20, "token-two-" + "2" * 20
    path.write_text(f"{one}\n{two}\n")
    path.chmod(0o600)
    server = start_server(token_file=path, remote={"rate_limit_per_minute": 3})
    statuses = [server.call("GET", "/v1/sessions", token=one).status for _ in range(3)]
    assert statuses == [200, 200, 200]
    limited = server.call("GET", "/v1/sessions", token=one)
    assert limited.status == 429
    assert limited.body["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1
    # another token has its own bucket; health is never limited
    assert server.call("GET", "/v1/sessions", token=two).status == 200
    assert server.call("GET", "/v1/health", token=None).status == 200


def test_failed_authentication_is_rate_limited_per_peer(start_server) -> None:
    server = start_server(remote={"rate_limit_per_minute": 3})
    statuses = [server.call("GET", "/v1/sessions", token="w" * 30).status for _ in range(4)]
    assert statuses == [401, 401, 401, 429]


def test_non_loopback_plain_http_is_refused(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    write_config(tmp_path, {"allowed_roots": [str(tmp_path)]})
    for host in ("0.0.0.0", "192.0.2.10", "example.invalid"):
        result = run_ecc("remote", "serve", "--host", host, "--port", "0", env=env)
        assert result.returncode == 1
        assert "refusing to serve plain HTTP" in result.stderr


def test_check_bind_rules() -> None:
    import pytest

    from ecc.contract.errors import EccError
    from ecc.remote.server import check_bind

    assert check_bind("127.0.0.1", tls=False, insecure=False) is None
    assert check_bind("::1", tls=False, insecure=False) is None
    assert check_bind("localhost", tls=False, insecure=False) is None
    assert check_bind("10.1.2.3", tls=True, insecure=False) is None
    assert "WARNING" in (check_bind("10.1.2.3", tls=False, insecure=True) or "")
    with pytest.raises(EccError):
        check_bind("10.1.2.3", tls=False, insecure=False)


def test_token_is_never_taken_from_argv(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    result = run_ecc("remote", "serve", "--token", "abcdefabcdefabcdefabcdef", env=env)
    assert result.returncode == 2  # click: no such option


def test_server_refuses_a_token_file_others_can_read(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    path = tmp_path / "loose"
    path.write_text("z" * 40 + "\n")
    path.chmod(0o644)
    result = run_ecc("remote", "serve", "--port", "0", "--token-file", str(path), env=env)
    assert result.returncode == 1
    assert "chmod 600" in result.stderr
    assert "z" * 40 not in result.stderr


def test_server_without_any_token_refuses_to_start(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    result = run_ecc("remote", "serve", "--port", "0", env=env)
    assert result.returncode == 1
    assert "ecc remote token" in result.stderr
