"""A real shell session with two tool calls reaches a real OTLP/HTTP receiver on 127.0.0.1 as
spans and metrics, decoded with opentelemetry-proto's own classes; a collector that is down
during a session changes nothing for it, and the daemon delivers the session once it is back."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from ecc.sessions import procs
from ecc.store.base import Store
from tests.conftest import run_ecc
from tests.otel.receiver import GrpcReceiver, Receiver, attributes
from tests.sessions.conftest import ecc_json, wait_state, wait_until

SECRET = "sekrit-token-123"
CALLS = [  # scored review and require_confirmation; the first carries a credential
    f'curl -s -H "Authorization: Bearer {SECRET}" https://example.invalid/status',
    "rm -rf node_modules",
]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Any:
    started = Receiver().start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", started.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "ecc-under-test")
    yield started
    started.stop()


def agent_task(tmp_path: Path, *, wait_for: Path | None = None) -> str:
    """A shell task that does what an agent's harness does: ``ecc hook`` before each of two
    tool calls (Claude's hook payloads), then prints its answer. With ``wait_for``, it first
    waits (bounded) for that file, so a test can act while the session runs."""
    lines = []
    if wait_for is not None:
        lines.append(f"i=0; while [ ! -e {shlex.quote(str(wait_for))} ] && [ $i -lt 600 ]; do")
        lines.append("  sleep 0.1; i=$((i+1)); done")
    ecc = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "ecc"))
    for number, command in enumerate(CALLS, 1):
        payload = tmp_path / f"call{number}.json"
        payload.write_text(
            json.dumps(
                {
                    "session_id": "claude-1",
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Bash",
                    "tool_input": {"command": command},
                    "tool_use_id": f"toolu_{number}",
                }
            )
        )
        lines.append(f"{ecc} hook --harness claude < {shlex.quote(str(payload))} > /dev/null")
    lines.append("echo all done")
    return "\n".join(lines)


def session_spans(receiver: Receiver, session_id: str) -> list[Any]:
    return [
        (resource, span)
        for resource, span in receiver.spans()
        if attributes(span.attributes).get("ecc.session.id") == session_id
    ]


def test_a_shell_session_with_two_tool_calls_arrives_as_spans_and_metrics(
    receiver: Receiver, git_repo: Path, tmp_path: Path, store: Store
) -> None:
    result = run_ecc("run", "--harness", "shell", agent_task(tmp_path), "--json", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout)["id"]
    recorded = ecc_json("tools", session_id)
    assert [row["input"]["command"] for row in recorded] == CALLS  # what the hook recorded

    wait_until(lambda: len(session_spans(receiver, session_id)) >= 3, 60, "3 spans")
    found = session_spans(receiver, session_id)
    assert receiver.rejected == []
    by_name: dict[str, list[Any]] = {}
    for resource, span in found:
        by_name.setdefault(span.name, []).append((attributes(resource.attributes), span))
    [(resource, root)] = by_name["session shell"]
    tools = [span for _, span in by_name["tool Bash"]]
    assert len(found) == 3 and len(tools) == 2
    assert resource["service.name"] == "ecc-under-test"  # the SDK's OTEL_SERVICE_NAME

    session = store.get_session(session_id)
    assert session is not None
    root_attrs = attributes(root.attributes)
    assert root_attrs["ecc.session.state"] == "completed"
    assert root_attrs["ecc.harness"] == "shell"
    assert root_attrs["ecc.exit.code"] == 0
    assert root_attrs["ecc.repository"] == session.repo_root
    assert root_attrs["ecc.tool_calls"] == 2
    assert root_attrs["ecc.tokens.input"] == 0 and root_attrs["ecc.cost_usd"] == 0.0
    assert root.status.code == root.status.STATUS_CODE_OK
    transitions = [
        attributes(event.attributes).get("ecc.session.to_state")
        for event in root.events
        if event.name == "ecc.transition"
    ]
    assert transitions[-2:] == ["running", "completed"]
    assert root.start_time_unix_nano < root.end_time_unix_nano

    assert {span.trace_id for span in tools} == {root.trace_id}
    assert {span.parent_span_id for span in tools} == {root.span_id}
    assert len({span.span_id for span in tools}) == 2
    tool_attrs = sorted((attributes(span.attributes) for span in tools), key=str)
    assert not any(SECRET in str(a) for a in tool_attrs)  # masked before it leaves
    by_input = {a["ecc.tool.input"].replace("***", SECRET): a for a in tool_attrs}
    for row in recorded:
        sent = by_input[row["input"]["command"]]
        assert sent["ecc.tool.risk_score"] == pytest.approx(row["score"])
        assert sent["ecc.tool.action"] == row["action"]
        assert sent["ecc.tool.decision"] == row["decision"]
    assert {a["ecc.tool.action"] for a in tool_attrs} == {"review", "require_confirmation"}
    for span in tools:
        assert root.start_time_unix_nano <= span.end_time_unix_nano <= root.end_time_unix_nano

    points = wait_until(lambda: receiver.metric_points().get("ecc.tool_calls"), 30, "metrics")
    metrics = receiver.metric_points()
    assert sorted(a["ecc.tool.action"] for a, value, _ in points for _ in range(int(value))) == [
        "require_confirmation",
        "review",
    ]
    [(state, count, temporality)] = metrics["ecc.sessions"]
    assert state == {"ecc.harness": "shell", "ecc.session.state": "completed"} and count == 1
    assert temporality == 1  # AGGREGATION_TEMPORALITY_DELTA
    assert {a["ecc.token.type"] for a, _, _ in metrics["ecc.tokens"]} == {"input", "output"}
    assert [value for _, value, _ in metrics["ecc.cost"]] == [0.0]

    # delivered once: nothing is due any more, and the store remembers it
    again = ecc_json("export")
    assert again["exporters"] == [{"exporter": "otel", "offered": 0, "delivered": 0, "error": ""}]
    said = run_ecc("export")
    assert (said.returncode, said.stdout) == (0, "otel: 0 of 0 delivered\n"), said.stderr
    assert store.export_marks(session_id) == {"otel": session.ended_at}


def test_a_collector_down_mid_session_changes_nothing_and_is_caught_up_later(
    receiver: Receiver, git_repo: Path, tmp_path: Path, store: Store
) -> None:
    go = tmp_path / "go"
    session_id = ecc_json(
        "start", "--harness", "shell", agent_task(tmp_path, wait_for=go), cwd=git_repo
    )["id"]
    running = wait_state(store, session_id, "running")
    receiver.stop()  # the collector goes away while the session runs
    go.touch()
    finished = wait_state(store, session_id, "completed", "failed", timeout=60)
    assert finished.state.value == "completed" and finished.exit_code == 0
    assert [line["line"] for line in ecc_json("logs", session_id)] == ["all done"]
    assert len(ecc_json("tools", session_id)) == 2
    # the runner tried, was refused and exited (its process: the session's runner_pid is
    # cleared once the end is recorded, before the runner offers it to the exporters); the
    # session stays due
    wait_until(
        lambda: not procs.alive(running.runner_pid, running.runner_token), 30, "the runner to exit"
    )
    assert store.export_marks(session_id) == {}

    receiver.start()  # back, on the same port
    assert session_spans(receiver, session_id) == []
    daemon = run_ecc("daemon", "--once", cwd=git_repo)
    assert daemon.returncode == 0, daemon.stderr
    spans = session_spans(receiver, session_id)
    assert sorted(span.name for _, span in spans) == ["session shell", "tool Bash", "tool Bash"]
    assert store.export_marks(session_id) == {"otel": finished.ended_at}

    # a second pass sends nothing again; an export --since sends the same spans, same ids
    assert run_ecc("daemon", "--once", cwd=git_repo).returncode == 0
    assert len(session_spans(receiver, session_id)) == 3
    resent = json.loads(run_ecc("otel", "export", "--since", "1h", "--json", cwd=git_repo).stdout)
    assert resent["exporters"][0]["delivered"] >= 1
    spans = session_spans(receiver, session_id)
    ids = sorted((span.trace_id, span.span_id) for _, span in spans)
    assert len(ids) == 6 and ids[0::2] == ids[1::2]
    counted = [value for _, value, _ in receiver.metric_points()["ecc.sessions"]]
    assert sum(counted) == 1  # the resend repeats the spans, never the counts


def test_over_grpc_the_same_session_arrives_through_the_sdks_grpc_exporter(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = GrpcReceiver().start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        result = run_ecc("run", "--harness", "shell", agent_task(tmp_path), "--json", cwd=git_repo)
        assert result.returncode == 0, result.stderr
        session_id = json.loads(result.stdout)["id"]
        wait_until(lambda: len(session_spans(receiver, session_id)) >= 3, 60, "3 spans")
        names = sorted(span.name for _, span in session_spans(receiver, session_id))
        assert names == ["session shell", "tool Bash", "tool Bash"]
        [resource, _] = session_spans(receiver, session_id)[0]
        assert attributes(resource.attributes)["service.name"] == "ecc"  # no OTEL_SERVICE_NAME
        points = wait_until(lambda: receiver.metric_points().get("ecc.sessions"), 30, "metrics")
        assert [value for _, value, _ in points] == [1]
    finally:
        receiver.stop()


def test_a_held_call_s_span_covers_its_approval_wait(
    receiver: Receiver, git_repo: Path, tmp_path: Path, store: Store
) -> None:
    from tests.approvals.conftest import CONFIRM, wait_pending

    payload = tmp_path / "held.json"
    payload.write_text(
        json.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": CONFIRM},
                "tool_use_id": "toolu_held",
            }
        )
    )
    ecc = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "ecc"))
    task = f"{ecc} hook --harness claude < {shlex.quote(str(payload))} > /dev/null; echo decided"
    enforce = {"ECC__RISK__ENFORCE": "true"}
    started = run_ecc("start", "--harness", "shell", task, "--json", cwd=git_repo, env=enforce)
    assert started.returncode == 0, started.stderr
    session_id = json.loads(started.stdout)["id"]
    pending = wait_pending(env=enforce)
    approved = run_ecc("approve", pending["id"], env=enforce)
    assert approved.returncode == 0, approved.stderr
    wait_state(store, session_id, "completed", "failed", timeout=60)

    wait_until(lambda: len(session_spans(receiver, session_id)) >= 2, 60, "2 spans")
    [tool] = [span for _, span in session_spans(receiver, session_id) if span.name == "tool Bash"]
    sent = attributes(tool.attributes)
    [approval] = store.list_approvals(pending=False, session_id=session_id)
    assert sent["ecc.approval.id"] == approval["id"]
    assert sent["ecc.approval.decision"] == approval["decision"] == "allow"
    assert sent["ecc.approval.decided_by"] == approval["decided_by"]
    assert sent["ecc.tool.action"] == "require_confirmation"
    assert sent["ecc.approval.wait_ms"] >= 0
    assert tool.start_time_unix_nano < tool.end_time_unix_nano  # the wait is inside the span
