"""The core's side of exporting (``ecc_export_sessions``): which finished sessions an exporter
is offered, what its answer records, and how failures and retries behave. An exporter plugin
written in the test is registered as an entry point of ``ecc.exporters`` would be."""

from __future__ import annotations

import json
import sys
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

from ecc.contract.hookspecs import EXPORTERS, hookimpl
from ecc.observability import exports
from ecc.runtime.config import view as fastconfig
from ecc.runtime.plugins import loader as plugins
from ecc.store.base import Store
from ecc.store.models import State
from tests.conftest import run_ecc


class Probe:
    """What the test exporter was offered, and what it answers next."""

    def __init__(self) -> None:
        self.offered: list[list[str]] = []
        self.records: dict[str, Any] = {}
        self.deliver: Any = "all"  # "all", a set of ids, or an exception to raise

    def answer(self, sessions: list[Any]) -> list[str] | None:
        self.offered.append([record.id for record in sessions])
        self.records.update({record.id: record for record in sessions})
        if isinstance(self.deliver, Exception):
            raise self.deliver
        if self.deliver == "all":
            return [record.id for record in sessions]
        return [record.id for record in sessions if record.id in self.deliver]


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Iterator[Probe]:
    found = Probe()
    module = types.ModuleType("ecc_test_probe_exporter")

    @hookimpl
    def ecc_export_sessions(sessions: list[Any], config: Any) -> list[str] | None:
        return found.answer(sessions)

    module.ecc_export_sessions = ecc_export_sessions  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    plugin_set = plugins.PluginSet(None, entry_points={EXPORTERS: [("probe", module.__name__)]})
    assert plugin_set.records[0].error is None
    plugins.use(plugin_set)
    yield found
    plugins.reset()


def finished(store: Store, session_id: str, state: State = State.COMPLETED) -> None:
    store.insert_session(
        session_id,
        task="probe",
        harness="shell",
        state=State.PENDING,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )
    store.transition(session_id, State.RUNNING, "harness started")
    store.record_tool_call(
        session_id=session_id, harness="shell", tool="Bash", input={"command": "ls"}, score=0.1
    )
    store.transition(session_id, state, "harness exited")


def export(store: Store, **options: Any) -> list[dict[str, Any]]:
    return exports.export(store, fastconfig.view(), **options)


def test_each_finished_session_is_offered_until_delivered(store: Store, probe: Probe) -> None:
    finished(store, "aaaa00000001")
    finished(store, "aaaa00000002", State.FAILED)
    store.insert_session(
        "aaaa00000003",
        task="still running",
        harness="shell",
        state=State.PENDING,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )
    probe.deliver = {"aaaa00000001"}
    [report] = export(store)
    assert report == {"exporter": "probe", "offered": 2, "delivered": 1, "error": ""}
    assert probe.offered == [["aaaa00000001", "aaaa00000002"]]  # never the active session
    record = probe.records["aaaa00000002"]
    assert record.session["state"] == "failed"
    assert [call["tool"] for call in record.tool_calls] == ["Bash"]
    assert [e["to_state"] for e in record.events if e["kind"] == "transition"] == [
        "pending",
        "running",
        "failed",
    ]

    probe.deliver = "all"
    assert export(store)[0]["delivered"] == 1  # only what was not delivered
    assert probe.offered[-1] == ["aaaa00000002"]
    assert export(store)[0]["offered"] == 0
    assert store.export_marks("aaaa00000001") == {
        "probe": store.get_session("aaaa00000001").ended_at  # type: ignore[union-attr]
    }


def test_a_failing_exporter_is_reported_and_its_sessions_stay_due(
    store: Store, probe: Probe
) -> None:
    finished(store, "bbbb00000001")
    probe.deliver = ConnectionRefusedError("collector down")
    [report] = export(store)
    assert report["delivered"] == 0 and "collector down" in report["error"]
    probe.deliver = "all"
    assert export(store)[0]["delivered"] == 1


def test_a_resumed_session_is_due_again_and_since_sends_again(store: Store, probe: Probe) -> None:
    finished(store, "cccc00000001", State.FAILED)
    assert export(store)[0]["delivered"] == 1
    assert probe.records["cccc00000001"].delivered is False
    first_end = store.get_session("cccc00000001").ended_at  # type: ignore[union-attr]
    assert export(store, since=first_end, again=True)[0]["delivered"] == 1  # sent again
    assert probe.records["cccc00000001"].delivered is True  # and said so
    assert export(store)[0]["offered"] == 0

    time.sleep(0.01)  # the store's times are milliseconds: the second end is a later one
    store.transition("cccc00000001", State.PENDING, "resumed")
    store.transition("cccc00000001", State.RUNNING, "harness started")
    store.transition("cccc00000001", State.COMPLETED, "harness exited")
    ended = store.get_session("cccc00000001").ended_at  # type: ignore[union-attr]
    assert ended != first_end
    assert export(store)[0]["delivered"] == 1
    assert store.export_marks("cccc00000001") == {"probe": ended}
    store.delete_session("cccc00000001")
    assert store.export_marks("cccc00000001") == {}


def test_the_daemon_backs_off_an_exporter_that_delivers_nothing(store: Store, probe: Probe) -> None:
    finished(store, "dddd00000001")
    backoff = exports.Backoff()
    probe.deliver = set()
    reports = export(store, skip=backoff.waiting())
    backoff.update(reports)
    assert backoff.waiting() == {"probe"}
    assert export(store, skip=backoff.waiting()) == []  # not offered while it waits
    assert len(probe.offered) == 1
    backoff.next_try["probe"] = 0.0  # its wait is over
    probe.deliver = "all"
    backoff.update(export(store, skip=backoff.waiting()))
    assert backoff.waiting() == set() and backoff.failures == {}


def test_bad_input_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    for argv, message in [
        (["export", "--since", "yesterday-ish"], "--since 'yesterday-ish' is neither"),
        (["export", "--exporter", "nope"], "no exporter 'nope'"),
        (["otel", "export"], "no OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT"),
    ]:
        result = run_ecc(*argv)
        assert result.returncode == 1, (argv, result)
        assert result.stderr.startswith(f"Error: {message}"), (argv, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_doctor_says_whether_and_where_ecc_otel_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    def otel_check() -> dict[str, Any]:
        result = run_ecc("doctor", "--json")
        checks = json.loads(result.stdout)["checks"]
        [check] = [c for c in checks if c["name"] == "exporter otel"]
        return check

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    off = otel_check()
    assert off["level"] == "warn" and "OTEL_EXPORTER_OTLP_ENDPOINT" in off["fix"]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    assert otel_check()["level"] == "fail"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    on = otel_check()
    assert on["level"] == "ok" and on["detail"] == "OTLP http/protobuf to http://127.0.0.1:4318"
