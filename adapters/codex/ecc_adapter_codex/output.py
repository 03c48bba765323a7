"""Parse ``codex exec --json`` lines (JSONL thread events) into session events.

``thread.started`` carries the thread id (what ``codex exec resume`` takes); ``item.started``
announces a ``command_execution`` (its ``SHELL -lc SCRIPT`` unwrapped to the script, as codex's
hook reports it) or ``mcp_tool_call``; ``item.completed`` carries
``file_change``, ``web_search`` and the ``agent_message`` (the answer); ``turn.completed`` has
the usage. That usage is the thread's running total (a resumed run reports the earlier turns
too), so it is marked ``cumulative: True``: replace, do not add.
"""

from __future__ import annotations

from typing import Any

from ecc.adapterkit import as_int, parse_json_line, table
from ecc.adapterkit.events import error, final, harness_session, tool_call, usage
from ecc.contract.types import OutputEvent

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
SHELL_FLAGS = frozenset({"-c", "-lc"})


def _script(command: str) -> str:
    """The script of codex's ``SHELL -lc SCRIPT`` wrapper (what its hook reports as the
    command), so the output's call and the hook's are one; any other command as shown."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[1] in SHELL_FLAGS and words[0].rsplit("/", 1)[-1] in SHELLS:
        return words[2]
    return command


def _tool(item: dict[str, Any]) -> OutputEvent | None:
    kind = item.get("type")
    item_id = item.get("id")
    if kind == "command_execution":
        # codex's own hooks report shell commands as tool "Bash" with {command}: do the same.
        return tool_call("Bash", {"command": _script(str(item.get("command") or ""))}, item_id)
    if kind == "mcp_tool_call":
        arguments = item.get("arguments")
        name = f"mcp__{item.get('server', '')}__{item.get('tool', '')}"
        return tool_call(
            name, arguments if isinstance(arguments, dict) else {"arguments": arguments}, item_id
        )
    if kind == "file_change":
        changes = item.get("changes")
        return tool_call(
            "apply_patch", {"changes": changes if isinstance(changes, list) else []}, item_id
        )
    if kind == "web_search":
        return tool_call("web_search", {"query": str(item.get("query") or "")}, item_id)
    return None


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    item = table(data.get("item"))
    if kind == "thread.started":
        return harness_session(data.get("thread_id"))
    if kind == "item.started" and item.get("type") in {"command_execution", "mcp_tool_call"}:
        event = _tool(item)
        return [event] if event else []
    if kind == "item.completed":
        if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            return [final(item["text"])]
        if item.get("type") in {"file_change", "web_search"}:
            event = _tool(item)
            return [event] if event else []
        return []
    if kind == "turn.completed":
        tokens = table(data.get("usage"))
        input_tokens, output_tokens = (
            as_int(tokens.get("input_tokens")),
            as_int(tokens.get("output_tokens")),
        )
        return [usage(input_tokens, output_tokens, cumulative=True)]
    if kind in {"turn.failed", "error"}:
        failure = data.get("error")
        message = failure.get("message") if isinstance(failure, dict) else data.get("message")
        return [error(message or kind)]
    return []
