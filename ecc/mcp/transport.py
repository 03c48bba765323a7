"""The stdio transport in front of the SDK's server: every message gets an answer, capped.

The SDK's own stdio transport reads whole lines (any size) and drops what it cannot parse
without a reply. This layer reads stdin in bounded chunks, refuses a line over 1 MiB before it
is held whole, parses with JavaScript's strictness and checks the JSON-RPC envelope and the MCP
lifecycle exactly as the reference server does, answering refusals itself. Only well-formed,
permitted messages reach the SDK's session; its replies and ours share one writer.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from typing import Any

MAX_MESSAGE_BYTES = 1048576
READ_CHUNK = 262144
MAX_IN_FLIGHT = 64
DRAIN_SECONDS = 60
MAX_SAFE_INTEGER = 2**53 - 1
TOOL_CALL_KEYS = frozenset({"name", "arguments", "_meta"})
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

TOO_LARGE = (-32700, "JSON-RPC message is too large.")
INVALID_JSON = (-32700, "Invalid JSON.")
INVALID_REQUEST = (-32600, "Invalid JSON-RPC request.")
INTERNAL_ERROR = (-32603, "Internal MCP server error.")
INPUT_FAILED = (-32603, "MCP input stream failed.")


class _TooLarge:
    """Marks, in the framer's output, a line that went over the cap (its bytes are gone)."""


OVERSIZED = _TooLarge()


def error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


class LineFramer:
    """Splits a byte stream on LF, holding at most ``MAX_MESSAGE_BYTES`` of one line.

    A line that grows past the cap yields :data:`OVERSIZED` once, as soon as that is known, and
    the rest of it up to the next LF is discarded as it arrives.
    """

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._pending = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes | _TooLarge]:
        out: list[bytes | _TooLarge] = []
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if self._discarding:
                self._discarding = newline < 0
            elif len(self._pending) + end - start > self.limit:
                self._pending.clear()
                out.append(OVERSIZED)
                self._discarding = newline < 0
            else:
                self._pending += chunk[start:end]
                if newline >= 0:
                    out.append(bytes(self._pending))
                    self._pending.clear()
            if newline < 0:
                break
            start = newline + 1
        return out

    def finish(self) -> list[bytes | _TooLarge]:
        """End of input: a final line without LF is still a message."""
        line, self._pending = bytes(self._pending), bytearray()
        return [line] if line and not self._discarding else []


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: bytes) -> Any:
    """JSON as JavaScript's ``JSON.parse`` reads it from a UTF-8 line (invalid bytes become
    U+FFFD; no NaN/Infinity; one trailing CR dropped). Raises ValueError when it is not JSON."""
    text = line.decode("utf-8", "replace")
    if text.endswith("\r"):
        text = text[:-1]
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _valid_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return 0 < _utf16_len(value) <= 128
    if isinstance(value, int):
        return abs(value) <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER
    return False


def _only_meta(
    params: dict[str, Any] | None, also: Callable[[str, Any], bool] | None = None
) -> bool:
    for key, value in (params or {}).items():
        if key == "_meta" and isinstance(value, dict):
            continue
        if also is not None and also(key, value):
            continue
        return False
    return True


class Gate:
    """The reference's envelope and lifecycle rules; decides what the SDK gets to see.

    ``check`` returns ``(answer, message)``: an error to write back ourselves, or the message
    (normalized) to forward to the SDK, or neither (an ignored notification).
    """

    def __init__(self, tool_names: Any, unknown: str = "Unknown or missing memory tool.") -> None:
        self.tools = frozenset(tool_names)
        self.unknown = unknown  # the refusal of a tool the server does not offer
        self.requested = False  # an initialize was accepted or is pending
        self.initialized = False
        self._init_id: Any = None

    def check(self, message: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if not isinstance(message, dict):
            return error(None, *INVALID_REQUEST), None
        method = message.get("method")
        has_id = "id" in message
        params = message.get("params")
        if (
            message.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
            or not 0 < _utf16_len(method) <= 128
            or (has_id and not _valid_id(message["id"]))
            or ("params" in message and not isinstance(params, dict))
        ):
            return error(None, *INVALID_REQUEST), None
        if not has_id:
            if method == "notifications/initialized":
                if self.requested and not params and not self.initialized:
                    self.initialized = True
                    return None, message
                return None, None
            return None, None  # other notifications are ignored, as in the reference
        id_ = message["id"]
        if isinstance(id_, float):
            message = dict(message, id=int(id_))
            id_ = message["id"]
        if method == "initialize":
            return self._initialize(id_, params, message)
        if not self.initialized:
            return error(id_, -32002, "Server is not initialized."), None
        if method == "ping":
            if not _only_meta(params):
                return error(id_, -32602, "ping accepts no parameters other than _meta."), None
            return None, message
        if method == "tools/list":
            if not _only_meta(params, lambda k, v: k == "cursor" and isinstance(v, str)):
                return error(id_, -32602, "Invalid tools/list parameters."), None
            return None, message
        if method == "tools/call":
            return self._tools_call(id_, params or {}, message)
        return error(id_, -32601, f"Method not found: {method}."), None

    def _initialize(
        self, id_: Any, params: Any, message: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if self.requested:
            return error(id_, -32600, "Server is already initialized."), None
        client = params.get("clientInfo") if isinstance(params, dict) else None
        if not (
            isinstance(params, dict)
            and isinstance(params.get("protocolVersion"), str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict)
            and isinstance(client.get("name"), str)
            and client["name"]
            and isinstance(client.get("version"), str)
            and client["version"]
        ):
            return error(id_, -32602, "Invalid initialize parameters."), None
        self.requested = True
        self._init_id = id_
        return None, message

    def _tools_call(
        self, id_: Any, params: dict[str, Any], message: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        name = params.get("name")
        if (
            not isinstance(name, str)
            or name not in self.tools
            or ("_meta" in params and not isinstance(params["_meta"], dict))
            or not set(params) <= TOOL_CALL_KEYS
        ):
            return error(id_, -32602, self.unknown), None
        if "arguments" in params and not isinstance(params["arguments"], dict):
            return error(id_, -32602, f"Invalid arguments for {name}."), None
        return None, message

    def observe(self, outgoing: dict[str, Any]) -> None:
        """An initialize the SDK refused does not count as requested (it may be retried)."""
        refused = "error" in outgoing and outgoing.get("id") == self._init_id
        if refused and self.requested and not self.initialized:
            self.requested = False


def encode(message: dict[str, Any]) -> bytes:
    """One compact JSON line; lone surrogates escaped as ``\\udXXX`` (as JavaScript does)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"


def claim_stdio() -> tuple[int, int]:
    """Private duplicates of fds 0 and 1 for the wire; fd 0 then reads /dev/null and fd 1 goes
    to stderr, so a stray print or a child process cannot corrupt the protocol stream."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire_in, wire_out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def serve(
    server: Any, tool_names: Any, wire_in: int, wire_out: int, unknown: str | None = None
) -> None:
    """Run the SDK ``server`` (a low-level ``Server``) behind the gate until stdin ends;
    ``unknown`` is how it refuses a tool it does not offer (the memory server's words by
    default)."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    gate = Gate(tool_names) if unknown is None else Gate(tool_names, unknown)
    to_sdk_send, to_sdk_recv = anyio.create_memory_object_stream[Any](0)
    from_sdk_send, from_sdk_recv = anyio.create_memory_object_stream[Any](0)
    out_send, out_recv = anyio.create_memory_object_stream[dict[str, Any]](16)

    async def writer() -> None:
        connected = True
        async with out_recv:
            async for message in out_recv:
                try:
                    data = encode(message)
                except (TypeError, ValueError):
                    data = encode(error(message.get("id"), *INTERNAL_ERROR))
                if connected:
                    try:
                        await anyio.to_thread.run_sync(_write_all, wire_out, data)
                    except OSError:
                        connected = False  # the client went away; keep draining

    # Forwarded requests not yet answered: at most MAX_IN_FLIGHT (the reference's queue bound),
    # the reader waits for a slot instead of dropping requests.
    slots = anyio.Semaphore(MAX_IN_FLIGHT)
    outstanding = 0

    def answered() -> None:
        nonlocal outstanding
        if outstanding > 0:
            outstanding -= 1
            slots.release()

    async def relay(sink: Any) -> None:
        async with from_sdk_recv, sink:
            async for session_message in from_sdk_recv:
                outgoing = session_message.message.model_dump(
                    by_alias=True, exclude_unset=True, mode="json"
                )
                gate.observe(outgoing)
                if "result" in outgoing or "error" in outgoing:
                    answered()
                await sink.send(outgoing)

    async def handle(line: bytes | _TooLarge, sink: Any) -> None:
        nonlocal outstanding
        if isinstance(line, _TooLarge):
            await sink.send(error(None, *TOO_LARGE))
            return
        try:
            message = parse_line(line)
        except ValueError:
            await sink.send(error(None, *INVALID_JSON))
            return
        try:
            answer, forward = gate.check(message)
            if forward is not None:
                parsed = types.jsonrpc_message_adapter.validate_python(forward, by_name=False)
                if "id" in forward:
                    await slots.acquire()
                    outstanding += 1
                await to_sdk_send.send(SessionMessage(parsed))
        except Exception:
            answer = error(None, *INTERNAL_ERROR)
        if answer is not None:
            await sink.send(answer)

    async def reader(sink: Any) -> None:
        framer = LineFramer()
        async with to_sdk_send, sink:
            while True:
                try:
                    chunk = await anyio.to_thread.run_sync(os.read, wire_in, READ_CHUNK)
                except OSError:
                    await sink.send(error(None, *INPUT_FAILED))
                    break
                lines = framer.feed(chunk) if chunk else framer.finish()
                for line in lines:
                    await handle(line, sink)
                if not chunk:
                    break
            # the SDK cancels what still runs when its input closes: let every request finish
            with anyio.move_on_after(DRAIN_SECONDS):
                for _ in range(MAX_IN_FLIGHT):
                    await slots.acquire()

    async def run_sdk() -> None:
        async with from_sdk_send:
            await server.run(to_sdk_recv, from_sdk_send, server.create_initialization_options())

    async with anyio.create_task_group() as group:
        group.start_soon(writer)
        group.start_soon(relay, out_send.clone())
        group.start_soon(run_sdk)
        await reader(out_send)
