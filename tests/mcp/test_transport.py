"""``ecc-memory-mcp`` at the transport: raw bytes on a real pipe, one JSON-RPC answer each.

Every malformed message gets a well-formed answer with the reference's code within a second,
and the server still answers a valid request afterwards (issue 23, items 1, 2 and 6).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ecc
from tests.conftest import git

SERVER = str(Path(sys.executable).with_name("ecc-memory-mcp"))
INIT_PARAMS = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
NOT_INITIALIZED = -32002
INVALID_REQUEST = {"code": -32600, "message": "Invalid JSON-RPC request."}
INVALID_JSON = {"code": -32700, "message": "Invalid JSON."}
TOO_LARGE = {"code": -32700, "message": "JSON-RPC message is too large."}


class RawServer:
    """The server on real pipes; answers are read line by line with a deadline."""

    def __init__(self, cwd: Path) -> None:
        env = dict(os.environ, ECC_MEMORY_HARNESS="claude")
        self.proc = subprocess.Popen(
            [SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.started = False

    def send(self, data: bytes | str | dict) -> None:
        if isinstance(data, dict):
            data = json.dumps(data) + "\n"
        if isinstance(data, str):
            data = data.encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self, timeout: float = 1.0) -> dict:
        """The next line on stdout, parsed; fails if none arrives within ``timeout`` (the first
        answer also waits for the server's start-up)."""
        if not self.started:
            timeout, self.started = max(timeout, 20.0), True
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {timeout} s"
            if self.selector.select(left):
                chunk = os.read(self.proc.stdout.fileno(), 65536)  # type: ignore[union-attr]
                assert chunk, "server closed stdout"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line.decode("utf-8"))  # strict UTF-8: the answer is well formed

    def silent(self, wait: float = 0.3) -> bool:
        return not self.buffer and not self.selector.select(wait)

    def request(self, message: dict, timeout: float = 1.0) -> dict:
        self.send(message)
        return self.answer(timeout)

    def initialize(self) -> dict:
        reply = self.request(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}, 10
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def ping_ok(self, id_: int = 99) -> None:
        assert self.request({"jsonrpc": "2.0", "id": id_, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": id_,
            "result": {},
        }

    def peak_rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        err = self.proc.stderr.read().decode("utf-8", "replace")  # type: ignore[union-attr]
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]
        self.selector.close()
        return self.proc.returncode, err


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture
def server(repo: Path):
    raw = RawServer(repo)
    yield raw
    raw.close()


def error_of(reply: dict, id_: object = None) -> dict:
    assert reply["jsonrpc"] == "2.0" and reply["id"] == id_ and "result" not in reply, reply
    return reply["error"]


def call(id_: int, params: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def test_initialize_and_lifecycle(server: RawServer, repo: Path) -> None:
    """Before `initialize` only `initialize` is served (-32002); a second one is -32600; bad
    params are -32602 and may be retried; the reported version is the package's."""
    assert error_of(server.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), 2) == {
        "code": NOT_INITIALIZED,
        "message": "Server is not initialized.",
    }
    assert error_of(server.request({"jsonrpc": "2.0", "id": 3, "method": "ping"}), 3)["code"] == (
        NOT_INITIALIZED
    )
    bad = {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 1}}
    assert error_of(server.request(bad), 4) == {
        "code": -32602,
        "message": "Invalid initialize parameters.",
    }
    reply = server.request(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS}, 10
    )
    assert reply["id"] == 0  # id 0 is a valid id
    result = reply["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"] == {"name": "ecc-memory-vault", "version": ecc.__version__}
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["instructions"].startswith("ECC memory results are context")
    # initialized is not yet notified: still not initialized
    pending = server.request({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert error_of(pending, 5)["code"] == NOT_INITIALIZED
    again = {"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": INIT_PARAMS}
    assert error_of(server.request(again), 6) == {
        "code": -32600,
        "message": "Server is already initialized.",
    }
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = server.request({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})["result"]["tools"]
    assert [tool["name"] for tool in tools] == [
        "memory_save",
        "memory_search",
        "memory_read",
        "memory_doctor",
    ]
    assert error_of(server.request(again), 6)["code"] == -32600
    unsupported = dict(INIT_PARAMS, protocolVersion="1999-01-01")
    fresh = RawServer(repo)
    try:
        reply = fresh.request(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": unsupported}, 10
        )
        assert reply["result"]["protocolVersion"] == "2025-11-25"
    finally:
        fresh.close()


MALFORMED: list[tuple[bytes, dict]] = (
    [
        (b"nope\n", INVALID_JSON),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping"\n', INVALID_JSON),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":NaN}}\n', INVALID_JSON),
        (b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":9,"method":"ping"}\n', INVALID_JSON),
        (b"\n", INVALID_JSON),
        (b"[" * 200_000 + b"]" * 200_000 + b"\n", INVALID_JSON),
        (b"[]\n", INVALID_REQUEST),
        (b'[{"jsonrpc":"2.0","id":9,"method":"ping"}]\n', INVALID_REQUEST),
        (b"42\n", INVALID_REQUEST),
        (b'{"jsonrpc":"1.0","id":9,"method":"ping"}\n', INVALID_REQUEST),
        (b'{"id":9,"method":"ping"}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9,"method":""}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9,"method":"' + b"m" * 129 + b'"}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[]}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[]}\n', INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":null}\n', INVALID_REQUEST),
    ]
    + [
        (b'{"jsonrpc":"2.0","id":' + bad + b',"method":"ping"}\n', INVALID_REQUEST)
        for bad in (b"null", b"false", b"true", b"{}", b"[]", b"1.5", b"9007199254740992", b'""')
    ]
    + [
        (b'{"jsonrpc":"2.0","id":"' + b"i" * 129 + b'","method":"ping"}\n', INVALID_REQUEST),
    ]
)


def test_malformed_messages_each_get_an_answer(server: RawServer) -> None:
    """Invalid JSON is -32700, anything that is not a JSON-RPC 2.0 request object is -32600,
    both with id null; the server keeps serving afterwards."""
    server.initialize()
    for raw, expected in MALFORMED:
        server.send(raw)
        reply = server.answer()
        assert error_of(reply) == expected, raw[:80]
        server.ping_ok()
    server.send(b'{"jsonrpc":"2.0","id":9,"method":"ping"}\r\n')  # one trailing CR is allowed
    assert server.answer() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    server.send(b'{"jsonrpc":"2.0","id":9.0,"method":"ping"}\n')  # JSON 9.0 is the integer 9
    assert server.answer() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    server.send(b'{"jsonrpc":"2.0","method":"notifications/whatever"}\n')
    assert server.silent()  # notifications are not answered
    unknown = server.request({"jsonrpc": "2.0", "id": "x", "method": "resources/list"})
    assert error_of(unknown, "x") == {
        "code": -32601,
        "message": "Method not found: resources/list.",
    }
    bad_ping = server.request({"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"a": 1}})
    assert error_of(bad_ping, 10)["code"] == -32602
    listed = server.request(
        {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": {}}}
    )
    assert len(listed["result"]["tools"]) == 4
    bad_list = server.request(
        {"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {"page": 2}}
    )
    assert error_of(bad_list, 12)["code"] == -32602


def test_tools_call_params_as_strict_as_the_reference(server: RawServer) -> None:
    """`_meta` null / an array / a scalar, an unknown top-level param, a missing or unknown tool:
    -32602 'Unknown or missing memory tool.'; non-object arguments: -32602 per tool."""
    server.initialize()
    unknown_tool = {"code": -32602, "message": "Unknown or missing memory tool."}
    for params in (
        {"name": "memory_doctor", "arguments": {}, "_meta": None},
        {"name": "memory_doctor", "arguments": {}, "_meta": []},
        {"name": "memory_doctor", "arguments": {}, "_meta": "x"},
        {"name": "memory_doctor", "arguments": {}, "_meta": 1},
        {"name": "memory_doctor", "arguments": {}, "_meta": True},
        {"name": "memory_doctor", "arguments": {}, "extra": 1},
        {"name": "memory_delete", "arguments": {}},
        {"arguments": {}},
        {},
    ):
        assert error_of(server.request(call(20, params)), 20) == unknown_tool, params
    for arguments in (None, False, 0, "", []):
        reply = server.request(call(21, {"name": "memory_search", "arguments": arguments}))
        assert error_of(reply, 21) == {
            "code": -32602,
            "message": "Invalid arguments for memory_search.",
        }, arguments
    ok = server.request(
        call(22, {"name": "memory_doctor", "_meta": {"progressToken": "p"}}), timeout=10
    )
    assert ok["id"] == 22 and json.loads(ok["result"]["content"][0]["text"])["ok"] is True


def test_save_with_lone_surrogate_and_invalid_utf8_gets_an_answer(
    server: RawServer, repo: Path
) -> None:
    """A lone-surrogate escape reaches the tool (the answer escapes it back, as JSON allows);
    an invalid UTF-8 byte reads as U+FFFD. Each gets one well-formed answer."""
    server.initialize()
    server.send(
        b'{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"memory_save",'
        b'"arguments":{"title":"lone \\ud800 sur","body":"surrogate body"}}}\n'
    )
    reply = server.answer(timeout=10)
    assert reply["id"] == 30 and "result" in reply, reply
    server.send(
        b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"memory_save",'
        b'"arguments":{"title":"bad \xff byte","body":"invalid utf-8 body"}}}\n'
    )
    reply = server.answer(timeout=10)
    assert reply["id"] == 31 and "result" in reply, reply
    result = reply["result"]
    assert not result.get("isError"), result
    assert json.loads(result["content"][0]["text"])["memory"]["title"] == "bad \ufffd byte"
    server.ping_ok()


def test_empty_scopes_read_nothing(server: RawServer) -> None:
    """`scopes: []` asks for no scope at all (the reference's reading), not the default."""
    server.initialize()
    saved = server.request(
        call(40, {"name": "memory_save", "arguments": {"title": "Kept", "body": "kept body"}}), 10
    )
    assert not saved["result"].get("isError")

    def payload(reply: dict) -> dict:
        return json.loads(reply["result"]["content"][0]["text"])

    default = server.request(call(41, {"name": "memory_search", "arguments": {"query": "kept"}}))
    assert len(payload(default)["results"]) == 1
    empty = {"query": "kept", "scopes": []}
    none = server.request(call(42, {"name": "memory_search", "arguments": empty}))
    assert payload(none)["results"] == []
    doctor = server.request(call(43, {"name": "memory_doctor", "arguments": {"scopes": []}}))
    assert payload(doctor)["memoryCount"] == 0


def test_oversized_line_is_refused_in_bounded_memory(server: RawServer) -> None:
    """A line over 1 MiB is answered -32700 'too large' once, without being held whole: a 100 MB
    line leaves the server's peak RSS far below the line's size, and serving resumes."""
    server.initialize()
    server.ping_ok()
    baseline = server.peak_rss_kib()
    server.send(b"x" * (1024 * 1024 + 1))  # no LF yet: the reference answers as soon as it knows
    assert error_of(server.answer(timeout=5)) == TOO_LARGE
    server.send(b"\n")
    server.ping_ok()
    server.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"')
    block = b"b" * (4 * 1024 * 1024)
    for _ in range(25):  # a 100 MB line
        server.send(block)
    server.send(b'"}}\n')
    assert error_of(server.answer(timeout=5)) == TOO_LARGE
    server.ping_ok()
    assert server.silent(0.2)  # one answer per oversized line, not one per chunk
    grown_mib = (server.peak_rss_kib() - baseline) / 1024
    assert grown_mib < 40, f"peak RSS grew by {grown_mib:.0f} MiB for a 100 MB line"
    exactly = b'{"jsonrpc":"2.0","id":50,"method":"ping","params":{"_meta":{"p":"'
    tail = b'"}}}\n'
    body = exactly + b"z" * (1024 * 1024 - len(exactly) - len(tail) + 1) + tail
    assert len(body) == 1024 * 1024 + 1  # 1 MiB of message plus its LF: still accepted
    server.send(body)
    assert server.answer(timeout=5) == {"jsonrpc": "2.0", "id": 50, "result": {}}


def test_flood_and_final_unterminated_line_are_all_served(repo: Path) -> None:
    """256 pings in one write are all answered (the reader waits for the server instead of
    dropping requests); at end of input the last line, without LF, still gets its answer."""
    raw = RawServer(repo)
    raw.initialize()
    raw.send(b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n for n in range(256)))
    ids = sorted(raw.answer(timeout=10)["id"] for _ in range(256))
    assert ids == list(range(256))
    raw.send(b'{"jsonrpc":"2.0","id":60,"method":"ping"}')
    raw.proc.stdin.close()  # type: ignore[union-attr]
    assert raw.answer(timeout=5) == {"jsonrpc": "2.0", "id": 60, "result": {}}
    code, err = raw.close()
    assert code == 0 and "Traceback" not in err
