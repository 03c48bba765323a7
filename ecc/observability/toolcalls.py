"""A session's recorded tool calls as people and clients see them (``ecc tools``,
``ecc status --json``, ``GET /v1/sessions/{id}/tool-calls``).

Each call is one row whether ``ecc hook`` decided it, the harness's output showed it, or both
(``source``); a call seen only in the output was scored after the fact and is ``observed``.
People see the input as an excerpt: bounded, sanitised, with common credential shapes masked
(:func:`ecc.observability.approvals.excerpt`), since an agent's tool input is untrusted; the
local ``--json`` views carry the whole input too (escaped as all JSON output is).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.store.base import Store

SOURCES = ("hook", "output", "both")
LISTED = 500  # the newest calls a listing shows


def view(row: dict[str, Any]) -> dict[str, Any]:
    """One stored tool call row as shown: the input decoded and as an excerpt, the action
    under the spec's names. (The remote API sends the excerpt only.)"""
    from ecc.observability.approvals import excerpt
    from ecc.observability.risk import stored_action

    try:
        tool_input: Any = json.loads(row.get("input_json") or "{}")
    except ValueError:
        tool_input = row.get("input_json") or ""
    source = row.get("source") or ("output" if row.get("decision") == "observed" else "hook")
    return {
        "id": row["id"],
        "tool": row["tool"],
        "harness": row.get("harness") or "",
        "input": tool_input,
        "input_excerpt": excerpt(tool_input),
        "score": row.get("score"),
        "action": stored_action(row.get("action"), row.get("score")),
        "reasons": list(row.get("reasons") or []),
        "decision": row.get("decision"),
        "source": source,
        "call_id": row.get("call_id"),
        "created_at": row.get("created_at"),
    }


def listing(store: Store, session_id: str, limit: int = LISTED) -> list[dict[str, Any]]:
    """The session's newest ``limit`` tool calls, oldest first, as shown."""
    return [view(row) for row in store.list_tool_calls(session_id, limit=limit)]
