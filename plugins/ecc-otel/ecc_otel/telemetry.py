"""Finished sessions' records as the SDK's spans and metrics, with identifiers derived from them.

Each session is one trace. Its root span runs from the session's creation to its recorded end
and carries the harness, repository, profile, executor, exit, tokens and cost as attributes and
each state change (and every other event the store kept) as a span event; each tool call is a
child span with the tool, risk score, suggested action, the decision the harness was told and,
for a call held for a person, the approval's decision and wait (the span covers the wait). Trace
and span ids are hashes of the session id and of the call's first-seen time, tool and input, so
sending a session twice sends the same spans.

Metrics are deltas over the sessions of one export (``DELTA`` sums): finished
sessions by final state, tokens by type, cost, and tool calls by suggested action and decision,
each also by harness.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ecc.contract.types import SessionRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricsData
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan

SCOPE = "ecc_otel"
TEXT_LIMIT = 256  # characters of a task, reason or tool input sent as an attribute


def nanos(text: str | None) -> int | None:
    """The store's ISO text as nanoseconds since the epoch."""
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(moment.timestamp() * 1_000_000) * 1000


def _hash_id(bits: int, *parts: str) -> int:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    value = int.from_bytes(digest[: bits // 8], "big")
    return value or 1  # an all-zero id is invalid in OTLP


def trace_id(session_id: str) -> int:
    return _hash_id(128, "ecc.trace", session_id)


def session_span_id(session_id: str) -> int:
    return _hash_id(64, "ecc.session", session_id)


def _excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _attributes(pairs: dict[str, Any]) -> dict[str, Any]:
    """OTLP attributes: None dropped, everything else a str, bool, int, float or a str list."""
    out: dict[str, Any] = {}
    for key, value in pairs.items():
        if value is None or value == "":
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [str(item) for item in value]
        else:
            out[key] = str(value)
    return out


def resource() -> Resource:
    """``service.name`` from ``OTEL_SERVICE_NAME`` (or ``OTEL_RESOURCE_ATTRIBUTES``), else
    ``ecc``; ``service.version`` is ecc's."""
    from opentelemetry.sdk.resources import Resource

    from ecc import __version__

    found = Resource.create({"service.version": __version__})
    if str(found.attributes.get("service.name", "")).startswith("unknown_service"):
        found = found.merge(Resource({"service.name": "ecc"}))
    return found


def _scope() -> Any:
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from ecc import __version__

    return InstrumentationScope(SCOPE, __version__)


def _approvals_by_call(record: SessionRecord) -> dict[int, dict[str, Any]]:
    """Each held call's approval, matched to its tool call: the first call of the same tool
    recorded at or after the approval was created (the hook records a call once decided)."""
    matched: dict[int, dict[str, Any]] = {}
    for approval in sorted(record.approvals, key=lambda a: a.get("created_at") or ""):
        for index, call in enumerate(record.tool_calls):
            if (
                index not in matched
                and call.get("tool") == approval.get("tool")
                and (call.get("created_at") or "") >= (approval.get("created_at") or "")
            ):
                matched[index] = approval
                break
    return matched


def spans(record: SessionRecord, where: Resource) -> list[ReadableSpan]:
    """The session's root span and one child span per tool call."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    session = record.session
    trace = trace_id(record.id)
    flags = TraceFlags(TraceFlags.SAMPLED)
    root = SpanContext(trace, session_span_id(record.id), is_remote=False, trace_flags=flags)
    start = nanos(session.get("created_at")) or 0
    end = max(nanos(session.get("ended_at") or session.get("updated_at")) or start, start)
    state = session.get("state")
    if state == "completed":
        status = Status(StatusCode.OK)
    elif state == "failed":
        status = Status(StatusCode.ERROR, _excerpt(session.get("reason") or "session failed"))
    else:
        status = Status(StatusCode.UNSET)
    events = [
        Event(
            f"ecc.{event.get('kind') or 'event'}",
            _attributes(
                {
                    "ecc.session.from_state": event.get("from_state"),
                    "ecc.session.to_state": event.get("to_state"),
                    "ecc.event.reason": _excerpt(event.get("reason") or ""),
                }
            ),
            timestamp=nanos(event.get("created_at")),
        )
        for event in record.events
    ]
    repository = session.get("repo_url") or session.get("repo_root") or session.get("project_dir")
    scope = _scope()
    out = [
        ReadableSpan(
            name=f"session {session.get('harness')}",
            context=root,
            resource=where,
            attributes=_attributes(
                {
                    "ecc.session.id": record.id,
                    "ecc.session.name": session.get("name"),
                    "ecc.session.task": _excerpt(session.get("task") or ""),
                    "ecc.session.state": state,
                    "ecc.session.reason": _excerpt(session.get("reason") or ""),
                    "ecc.session.run_kind": session.get("run_kind"),
                    "ecc.session.attempts": session.get("attempts"),
                    "ecc.harness": session.get("harness"),
                    "ecc.profile": session.get("profile_name"),
                    "ecc.executor": session.get("executor"),
                    "ecc.repository": repository,
                    "ecc.worktree.branch": session.get("worktree_branch"),
                    "ecc.base_commit": session.get("base_commit"),
                    "ecc.session.enforced": session.get("enforced"),
                    "ecc.exit.code": session.get("exit_code"),
                    "ecc.exit.signal": session.get("exit_signal"),
                    "ecc.tokens.input": int(session.get("input_tokens") or 0),
                    "ecc.tokens.output": int(session.get("output_tokens") or 0),
                    "ecc.cost_usd": float(session.get("cost_usd") or 0.0),
                    "ecc.tool_calls": len(record.tool_calls),
                }
            ),
            events=events,
            kind=SpanKind.INTERNAL,
            status=status,
            start_time=start,
            end_time=end,
            instrumentation_scope=scope,
        )
    ]
    approvals = _approvals_by_call(record)
    seen: Counter[tuple[str, ...]] = Counter()
    for index, call in enumerate(record.tool_calls):
        key = (
            str(call.get("created_at")),
            str(call.get("tool")),
            str(call.get("input_json")),
            str(call.get("call_id") or ""),
        )
        seen[key] += 1
        span_id = _hash_id(64, "ecc.tool", record.id, *key, str(seen[key]))
        called = nanos(call.get("created_at")) or end
        approval = approvals.get(index)
        held = nanos(approval.get("created_at")) if approval else None
        decided = nanos(approval.get("decided_at")) if approval else None
        wait_ms = (decided - held) // 1_000_000 if held and decided else None
        out.append(
            ReadableSpan(
                name=f"tool {call.get('tool')}",
                context=SpanContext(trace, span_id, is_remote=False, trace_flags=flags),
                parent=root,
                resource=where,
                attributes=_attributes(
                    {
                        "ecc.session.id": record.id,
                        "ecc.tool.name": call.get("tool"),
                        "ecc.tool.input": call.get("input_excerpt"),
                        "ecc.tool.risk_score": call.get("score"),
                        "ecc.tool.action": call.get("action"),
                        "ecc.tool.decision": call.get("decision"),
                        "ecc.tool.reasons": list(call.get("reasons") or []),
                        "ecc.tool.call_id": call.get("call_id"),
                        "ecc.tool.source": call.get("source"),
                        "ecc.approval.id": approval.get("id") if approval else None,
                        "ecc.approval.decision": approval.get("decision") if approval else None,
                        "ecc.approval.decided_by": (
                            approval.get("decided_by") if approval else None
                        ),
                        "ecc.approval.wait_ms": wait_ms,
                    }
                ),
                kind=SpanKind.INTERNAL,
                start_time=min(held, called) if held else called,
                end_time=called,
                instrumentation_scope=scope,
            )
        )
    return out


def metrics(records: list[SessionRecord], where: Resource) -> MetricsData:
    """The export's deltas: sessions by state, tokens, cost and tool calls by action."""
    from opentelemetry.sdk.metrics.export import (
        AggregationTemporality,
        Metric,
        MetricsData,
        NumberDataPoint,
        ResourceMetrics,
        ScopeMetrics,
        Sum,
    )

    ends = [nanos(r.session.get("ended_at")) or 0 for r in records]
    start, stop = min(ends), max(ends)
    stop = max(stop, start + 1)
    sessions: Counter[tuple[str, str]] = Counter()
    tokens: Counter[tuple[str, str]] = Counter()
    cost: defaultdict[str, float] = defaultdict(float)
    calls: Counter[tuple[str, str, str]] = Counter()
    for r in records:
        harness = str(r.session.get("harness"))
        sessions[(harness, str(r.session.get("state")))] += 1
        tokens[(harness, "input")] += int(r.session.get("input_tokens") or 0)
        tokens[(harness, "output")] += int(r.session.get("output_tokens") or 0)
        cost[harness] += float(r.session.get("cost_usd") or 0.0)
        for call in r.tool_calls:
            action = str(call.get("action") or "none")
            calls[(harness, action, str(call.get("decision") or "none"))] += 1

    def point(attributes: dict[str, str], value: float) -> NumberDataPoint:
        return NumberDataPoint(attributes, start, stop, value, exemplars=[])

    def total(name: str, unit: str, description: str, points: list[NumberDataPoint]) -> Metric:
        data = Sum(points, AggregationTemporality.DELTA, is_monotonic=True)
        return Metric(name=name, description=description, unit=unit, data=data)

    found = [
        total(
            "ecc.sessions",
            "{session}",
            "Finished sessions, by their final state",
            [
                point({"ecc.harness": h, "ecc.session.state": s}, n)
                for (h, s), n in sorted(sessions.items())
            ],
        ),
        total(
            "ecc.tokens",
            "{token}",
            "Tokens the finished sessions' agents used",
            [
                point({"ecc.harness": h, "ecc.token.type": t}, n)
                for (h, t), n in sorted(tokens.items())
            ],
        ),
        total(
            "ecc.cost",
            "USD",
            "What the finished sessions cost",
            [point({"ecc.harness": h}, float(c)) for h, c in sorted(cost.items())],
        ),
    ]
    if calls:
        found.append(
            total(
                "ecc.tool_calls",
                "{call}",
                "Tool calls of the finished sessions, by suggested action and decision",
                [
                    point({"ecc.harness": h, "ecc.tool.action": a, "ecc.tool.decision": d}, n)
                    for (h, a, d), n in sorted(calls.items())
                ],
            )
        )
    scope = ScopeMetrics(scope=_scope(), metrics=found, schema_url="")
    return MetricsData([ResourceMetrics(resource=where, scope_metrics=[scope], schema_url="")])
