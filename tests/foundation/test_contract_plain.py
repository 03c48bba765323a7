"""The hook's contract types behave as the dataclasses they were, without importing
``dataclasses`` on import (``ecc.contract.plain``)."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest

from ecc.contract import types


def test_importing_the_hook_types_imports_neither_dataclasses_nor_typing() -> None:
    probe = (
        "import sys, ecc.contract.types, ecc.observability.risk\n"
        "print(sorted(m for m in ('dataclasses', 'inspect', 'typing') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_fields_defaults_and_factories_are_those_of_a_dataclass() -> None:
    fields = {f.name: f for f in dataclasses.fields(types.HookDecision)}
    assert list(fields) == ["event", "decision", "action", "score", "reason", "reasons"]
    assert fields["event"].default is dataclasses.MISSING
    assert fields["decision"].default == "allow"
    assert fields["reasons"].default_factory is list
    event = types.HookEvent("claude", "PreToolUse")
    one, two = types.HookDecision(event), types.HookDecision(event)
    assert one.reasons == [] and one.reasons is not two.reasons
    assert one == two and one != types.HookDecision(event, "deny")
    assert dataclasses.asdict(one)["event"] == {
        "harness": "claude",
        "event": "PreToolUse",
        "phase": "other",
        "call": None,
        "harness_session_id": None,
        "tool_use_id": None,
        "output": None,
    }
    changed = dataclasses.replace(one, decision="deny", reasons=["why"])
    assert (changed.decision, changed.reasons, changed.event) == ("deny", ["why"], event)
    assert repr(types.HookResponse(2, stderr="no\n")) == (
        "HookResponse(exit_code=2, stdout='', stderr='no\\n')"
    )
    with pytest.raises(TypeError):
        hash(one)  # mutable dataclasses are unhashable
    assert pickle.loads(pickle.dumps(one)) == one


def test_a_frozen_type_stays_frozen_and_hashable() -> None:
    contribution = types.RiskContribution(0.5, "rm -rf")
    assert contribution == types.RiskContribution(0.5, "rm -rf", "")
    assert hash(contribution) == hash(types.RiskContribution(0.5, "rm -rf"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        contribution.amount = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del contribution.reason
    assert dataclasses.fields(contribution)[2].default == ""
    assert types.RiskContribution.__dataclass_params__.frozen
    assert pickle.loads(pickle.dumps(contribution)) == contribution


def test_match_args_and_positional_construction() -> None:
    call = types.ToolCall("Bash", {"command": "ls"}, "claude")
    match call:
        case types.ToolCall(tool, command, harness):
            assert (tool, command, harness) == ("Bash", {"command": "ls"}, "claude")
    with pytest.raises(TypeError):
        types.ToolCall()  # type: ignore[call-arg]
