"""A stub model server for the end-to-end tests: four provider APIs on 127.0.0.1, no model.

It speaks just enough of each API the harness CLIs use (see ``spec/real-harnesses.md``):

* Anthropic Messages (``POST /v1/messages``, SSE) for Claude Code;
* OpenAI Responses (``POST /v1/responses``, SSE) for Codex;
* Gemini ``streamGenerateContent?alt=sse`` for the Gemini CLI;
* OpenAI Chat Completions (``POST /v1/chat/completions``, SSE) for OpenCode.

Every conversation goes the same way: while the request carries no tool result, the answer is
one shell tool call (``StubServer.tool_command``: :data:`TOOL_COMMAND` unless a test sets it);
once it does, the answer is :data:`FINAL_TEXT`. A test may script an Anthropic conversation
instead (``StubServer.anthropic_script``: :class:`Step` s, e.g. MCP tool calls, answered one per
tool result the request carries, then :data:`FINAL_TEXT`). A
request without tools (OpenCode's title generation) gets :data:`TITLE_TEXT`. Every answer reports
:data:`INPUT_TOKENS` and :data:`OUTPUT_TOKENS` as its usage. Each request is recorded (path,
headers, JSON body) so a test can check what the CLI sent, e.g. that a resumed run carried the
earlier conversation.

Run standalone: ``python stub_server.py --port 0 --port-file PORT_FILE [--log FILE]``. It binds
only to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_COMMAND = "echo hello > out.txt"
FINAL_TEXT = "STUB-FINAL: tool ran, done"
TITLE_TEXT = "Stub title"
INPUT_TOKENS = 120
OUTPUT_TOKENS = 30
MODEL = "stub-model"


def _contains(value: Any, predicate: Any) -> bool:
    """Whether any dict nested anywhere in ``value`` satisfies ``predicate``."""
    if isinstance(value, dict):
        if predicate(value):
            return True
        return any(_contains(v, predicate) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, predicate) for v in value)
    return False


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    chunks = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        chunks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(chunks).encode()


# -- Anthropic Messages (Claude Code) ----------------------------------------------------------


@dataclass
class Step:
    """One scripted answer of the model: a call of ``tool`` with ``input`` (a dict, or a function
    of the request body giving one: e.g. an id read from an earlier tool result), or ``text``.

    ``tool`` names a tool the request offers, exactly or as the suffix after ``__`` (Claude Code
    offers an MCP server's tools as ``mcp__SERVER__TOOL``).
    """

    tool: str = ""
    input: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] = field(default_factory=dict)
    text: str = ""


def tool_results(messages: Any) -> list[str]:
    """The texts of the tool results in an Anthropic conversation, oldest first."""
    found: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        for block in message.get("content", []) if isinstance(message, dict) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = "".join(
                        part.get("text", "") for part in content if isinstance(part, dict)
                    )
                found.append(str(content or ""))
    return found


def _scripted(body: dict[str, Any], script: list[Step]) -> tuple[str, dict[str, Any] | str]:
    """(tool name, input) or ("", text): the step as many tool results in as the body holds."""
    step_index = len(tool_results(body.get("messages", [])))
    if step_index >= len(script):
        return "", FINAL_TEXT
    step = script[step_index]
    if not step.tool:
        return "", step.text
    offered = [t.get("name", "") for t in body.get("tools", []) if isinstance(t, dict)]
    name = next((n for n in offered if n == step.tool or n.endswith("__" + step.tool)), None)
    if name is None:
        return "", f"STUB: the tool {step.tool} is not offered (offered: {', '.join(offered)})"
    arguments = step.input(body) if callable(step.input) else step.input
    return name, arguments


def anthropic(
    body: dict[str, Any], command: str = TOOL_COMMAND, script: list[Step] | None = None
) -> tuple[str, bytes]:
    done = _contains(body.get("messages", []), lambda d: d.get("type") == "tool_result")
    msg_id = "msg_" + uuid.uuid4().hex[:20]
    usage = {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS}
    scripted: tuple[str, dict[str, Any] | str] | None = None
    if script and body.get("tools"):
        scripted = _scripted(body, script)
    if scripted is not None and scripted[0]:
        tool_id = "toolu_" + uuid.uuid4().hex[:20]
        block = {"type": "tool_use", "id": tool_id, "name": scripted[0], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(scripted[1])}
        full = {**block, "input": scripted[1]}
        stop = "tool_use"
    elif scripted is not None:
        text = str(scripted[1])
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
        full = {"type": "text", "text": text}
        stop = "end_turn"
    elif done or not body.get("tools"):
        text = FINAL_TEXT if done else TITLE_TEXT
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
        full = {"type": "text", "text": text}
        stop = "end_turn"
    else:
        tool_id = "toolu_" + uuid.uuid4().hex[:20]
        block = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}
        args = {"command": command, "description": "Create out.txt"}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        full = {**block, "input": args}
        stop = "tool_use"
    if not body.get("stream"):
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model", MODEL),
            "content": [full],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return "application/json", json.dumps(message).encode()
    start = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1},
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", _sse(events)


# -- OpenAI Responses (Codex) ------------------------------------------------------------------


def responses(body: dict[str, Any], command: str = TOOL_COMMAND) -> tuple[str, bytes]:
    done = _contains(body.get("input", []), lambda d: d.get("type") == "function_call_output")
    if done or not body.get("tools"):
        item: dict[str, Any] = {
            "type": "message",
            "id": "msg_" + uuid.uuid4().hex[:20],
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": FINAL_TEXT if done else TITLE_TEXT,
                    "annotations": [],
                }
            ],
        }
    else:
        item = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:20],
            "call_id": "call_" + uuid.uuid4().hex[:20],
            "name": "exec_command",
            "arguments": json.dumps({"cmd": command}),
            "status": "completed",
        }
    resp_id = "resp_" + uuid.uuid4().hex[:20]
    usage = {
        "input_tokens": INPUT_TOKENS,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": OUTPUT_TOKENS,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }
    base = {"id": resp_id, "object": "response", "model": body.get("model", MODEL)}
    events: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {"type": "response.created", "response": {**base, "status": "in_progress"}},
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            },
        ),
    ]
    return "text/event-stream", _sse(events)


# -- Gemini (Gemini CLI) -------------------------------------------------------------------------


def gemini(body: dict[str, Any], command: str = TOOL_COMMAND) -> tuple[str, bytes]:
    done = _contains(body.get("contents", []), lambda d: "functionResponse" in d)
    if done or not body.get("tools"):
        part: dict[str, Any] = {"text": FINAL_TEXT if done else TITLE_TEXT}
    else:
        part = {
            "functionCall": {
                "name": "run_shell_command",
                "args": {"command": command, "description": "Create out.txt"},
            }
        }
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": INPUT_TOKENS,
            "candidatesTokenCount": OUTPUT_TOKENS,
            "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS,
        },
        "modelVersion": MODEL,
    }
    return "text/event-stream", _sse([(None, response)])


# -- OpenAI Chat Completions (OpenCode) ---------------------------------------------------------


def chat(body: dict[str, Any], command: str = TOOL_COMMAND) -> tuple[str, bytes]:
    done = any(m.get("role") == "tool" for m in body.get("messages", []) if isinstance(m, dict))
    chunk_id = "chatcmpl-" + uuid.uuid4().hex[:20]
    base = {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": MODEL}
    usage = {
        "prompt_tokens": INPUT_TOKENS,
        "completion_tokens": OUTPUT_TOKENS,
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }

    if done or not body.get("tools"):
        text = FINAL_TEXT if done else TITLE_TEXT
        chunks = [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": text}),
            chunk({}, "stop", usage=usage),
        ]
    else:
        call = {
            "index": 0,
            "id": "call_" + uuid.uuid4().hex[:20],
            "type": "function",
            "function": {
                "name": "bash",
                "arguments": json.dumps({"command": command, "description": "Create out.txt"}),
            },
        }
        chunks = [
            chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
            chunk({}, "tool_calls", usage=usage),
        ]
    return "text/event-stream", _sse([*((None, c) for c in chunks), (None, "[DONE]")])


# -- server ---------------------------------------------------------------------------------------


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log_path: Path | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.log_path = log_path
        self.tool_command = TOOL_COMMAND  # what the next conversations' tool call runs
        # Anthropic conversations (Claude Code) answer these steps in order instead, one per
        # tool result so far; then FINAL_TEXT. None: the default conversation.
        self.anthropic_script: list[Step] | None = None
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(entry) + "\n")

    def model_requests(self) -> list[dict[str, Any]]:
        """Requests that asked for a model answer (not preflights)."""
        return [r for r in self.requests if r["method"] == "POST"]

    def start(self) -> StubServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def do_HEAD(self) -> None:
        self.server.record({"method": "HEAD", "path": self.path, "headers": {}, "body": None})
        self._send(200, "text/plain", b"")

    def do_GET(self) -> None:
        self.server.record({"method": "GET", "path": self.path, "headers": {}, "body": None})
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, "application/json", json.dumps({"data": [], "models": []}).encode())
            return
        self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        self.server.record(
            {
                "method": "POST",
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        if path.endswith("/messages"):
            handler = anthropic
        elif path.endswith("/responses"):
            handler = responses
        elif path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
            handler = gemini
        elif path.endswith("/chat/completions"):
            handler = chat
        else:
            self._send(404, "application/json", b'{"error":{"message":"unknown endpoint"}}')
            return
        request = body if isinstance(body, dict) else {}
        if handler is anthropic:
            content_type, payload = anthropic(
                request, self.server.tool_command, self.server.anthropic_script
            )
        else:
            content_type, payload = handler(request, self.server.tool_command)
        self._send(200, content_type, payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="only 0 (any free port) is supported")
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--tool-command", default=TOOL_COMMAND)
    args = parser.parse_args()
    if args.port != 0:
        parser.error("--port must be 0")
    server = StubServer(args.log)
    server.tool_command = args.tool_command
    args.port_file.write_text(str(server.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
