"""``ecc_parse_hook_payload`` and ``ecc_hook_response`` from a plugin's side: a third-party
adapter with a protocol of its own is registered, and ``ecc hook``'s real path (parse, score,
decide, record, answer) runs through it, first through the full plugin load, then through the
compiled module list of the warm path."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecc.observability import toolhook
from ecc.runtime.plugins import index
from ecc.runtime.plugins import loader as plugins
from ecc.store.open import default_path, open_store

MODULE = "ecc_test_acme_hooks"

# The "acme" harness sends {"type": "before_tool"|"after_tool"|..., "tool": T, "args": {...}}
# and reads a JSON verdict on stdout; exit 3 stops the tool.
ACME_HOOKS = """
import json

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, HookEvent, HookResponse, ToolCall

PHASES = {"before_tool": "pre_tool", "after_tool": "post_tool"}
calls = []  # what the core passed in, for the test to look at


@hookimpl
def ecc_harnesses():
    return HarnessInfo(name="acme", program="acme")


@hookimpl
def ecc_parse_hook_payload(harness, event, payload):
    calls.append(("parse", event, payload))
    if not isinstance(payload, dict):
        return HookEvent(harness=harness, event=event, phase="other")
    kind = payload.get("type")
    phase = PHASES.get(kind, "other")
    call = None
    if phase != "other":
        tool = str(payload.get("tool") or "unknown")
        args = payload.get("args") if isinstance(payload.get("args"), dict) else {}
        call = ToolCall(tool=tool, input=args, kind="shell" if tool == "sh" else "other")
    return HookEvent(harness=harness, event=event or str(kind), phase=phase, call=call)


@hookimpl
def ecc_hook_response(harness, decision):
    calls.append(("respond", decision.decision, decision.reason))
    verdict = {"verdict": decision.decision, "why": decision.reason}
    verdict["event"] = decision.event.event
    exit_code = 3 if decision.decision == "deny" else 0
    return HookResponse(exit_code=exit_code, stdout=json.dumps(verdict) + "\\n")
"""


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The acme adapter as an installed module, registered with the built-in risk scorer."""
    site = tmp_path / "acme-site"
    site.mkdir()
    (site / f"{MODULE}.py").write_text(ACME_HOOKS)
    monkeypatch.syspath_prepend(str(site))
    plugin_set = plugins.PluginSet(
        None,
        entry_points={
            "ecc.adapters": [("acme", MODULE)],
            "ecc.risk_scorers": [("heuristic", "ecc_plugins.heuristic")],
        },
    )
    assert [record.error for record in plugin_set.records] == [None, None]
    plugins.use(plugin_set)
    yield sys.modules[MODULE]
    sys.modules.pop(MODULE, None)


def hook(payload: object, tmp_path: Path, harness: str = "acme", event: str = "") -> object:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return toolhook.run(harness, event, raw, cwd=tmp_path)


def verdict(response) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(response.stdout)


def recorded() -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_tool_calls()


def before(command: str) -> dict:
    return {"type": "before_tool", "tool": "sh", "args": {"command": command}}


def test_a_blocked_call_is_denied_in_the_adapters_own_protocol_and_recorded(
    acme, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECC__RISK__ENFORCE", "true")
    response = hook(before("rm -rf /"), tmp_path, event="BeforeTool")
    assert response.exit_code == 3 and response.stderr == ""
    answer = verdict(response)
    assert answer["verdict"] == "deny" and answer["event"] == "BeforeTool"
    assert "blocked" in answer["why"] and "sh call" in answer["why"]
    assert acme.calls[0] == ("parse", "BeforeTool", before("rm -rf /"))  # payload as JSON
    [row] = recorded()
    assert (row["harness"], row["tool"], row["decision"]) == ("acme", "sh", "deny")
    assert json.loads(row["input_json"]) == {"command": "rm -rf /"}


def test_a_harmless_call_is_allowed_and_the_warm_path_answers_the_same(
    acme, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECC__RISK__ENFORCE", "true")
    first = hook(before("ls"), tmp_path)
    assert (first.exit_code, verdict(first)["verdict"]) == (0, "allow")
    warm = index.read_hot(toolhook.load(tmp_path)[0], toolhook.HOT_HOOKS)
    assert warm is not None and MODULE in {entry["module"] for entry in warm["modules"]}
    assert warm["harnesses"] == {"acme": ["ecc.adapters:acme"]}
    plugins.reset()  # the full set is gone: only the compiled module list can answer now
    denied = hook(before("rm -rf /"), tmp_path)
    assert (denied.exit_code, verdict(denied)["verdict"]) == (3, "deny")
    assert [row["decision"] for row in recorded()] == ["allow", "deny"]


def test_events_that_are_not_tool_calls_are_answered_but_neither_scored_nor_recorded(
    acme, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECC__RISK__ENFORCE", "true")
    response = hook({"type": "session_start"}, tmp_path)
    assert verdict(response) == {"verdict": "allow", "why": "", "event": "session_start"}
    odd = hook(["not", "an", "object"], tmp_path)  # never raise on odd payloads
    assert verdict(odd)["verdict"] == "allow"
    assert recorded() == []


def test_an_internal_error_is_answered_by_the_adapter_with_the_fail_closed_decision(
    acme, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECC__RISK__FAIL_CLOSED", "true")
    response = hook(b"{not json", tmp_path)
    assert response.exit_code == 3
    answer = verdict(response)
    assert answer["verdict"] == "deny" and "fail_closed" in answer["why"]
    assert [call[0] for call in acme.calls] == ["respond"]  # never parsed: the JSON was bad


def test_a_harness_no_adapter_owns_gets_the_generic_answer(
    acme, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ECC__RISK__FAIL_CLOSED", "true")
    response = hook(before("ls"), tmp_path, harness="other")
    assert (response.exit_code, response.stdout) == (2, "")  # exit 2 + stderr: the generic deny
    assert "fail_closed" in response.stderr
    assert acme.calls == []  # acme declares only "acme": it is never asked about another harness
