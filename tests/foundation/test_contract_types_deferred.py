"""``ecc.contract.types`` builds on import only the dataclasses a tool call's hook uses.

Processing a dataclass costs about half a millisecond, and ``ecc hook`` runs before every tool
call; the other types are defined on first use, under the same names.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ecc.contract.types as types_module

HOOK_TYPES = {  # every adapter's hook module imports the integration types too
    "HookDecision",
    "HookEvent",
    "HookResponse",
    "IntegrationRequest",
    "IntegrationResult",
    "RiskContribution",
    "ToolCall",
}
ALL_TYPES = HOOK_TYPES | {
    "HarnessInfo",
    "SessionEnforcement",
    "SessionMcpServer",
    "LaunchContext",
    "ProfileTranslation",
    "OutputEvent",
    "Notification",
    "IntegrationRequest",
    "IntegrationResult",
    "PullRequestProposal",
    "PullRequest",
    "SyncRule",
    "SyncCommand",
    "SyncHook",
    "SyncSource",
    "SurfaceFile",
    "SurfacePlan",
    "SessionRecord",
    "MemoryCandidate",
}

PROBE = """
import dataclasses, json, sys
from ecc.observability.toolhook import run
payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "ls"}}).encode()
response = run("claude", "", payload)
built = sorted(
    name
    for module_name, module in list(sys.modules.items())
    if module_name.startswith("ecc.contract")
    for name, value in vars(module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
)
print(json.dumps({"exit": response.exit_code, "built": built}))
"""


def test_the_warm_hook_builds_only_the_hook_types(tmp_path) -> None:
    env = {
        **os.environ,
        "ECC_STATE_DIR": str(tmp_path / "state"),
        "ECC_CACHE_DIR": str(tmp_path / "cache"),
        "ECC_CONFIG_DIR": str(tmp_path / "config"),
        "ECC_DATA_DIR": str(tmp_path / "data"),
        "ECC__RISK__ENFORCE": "true",
    }
    for _ in range(2):  # the first run compiles the config and plugin caches
        done = subprocess.run(
            [sys.executable, "-c", PROBE],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer == {"exit": 0, "built": sorted(HOOK_TYPES)}


@pytest.mark.parametrize("name", sorted(ALL_TYPES))
def test_every_type_keeps_its_name_and_stays_a_dataclass(name: str) -> None:
    value = getattr(types_module, name)
    assert value is getattr(types_module, name)  # one class, however it is reached
    assert value.__name__ == name
    assert dataclasses.is_dataclass(value)
    assert name in dir(types_module)
    namespace: dict[str, object] = {}
    exec(f"from ecc.contract.types import {name}", namespace)
    assert namespace[name] is value


def test_deferred_types_behave_as_before() -> None:
    from ecc.contract.types import LaunchContext, SyncRule

    context = LaunchContext("s1", "task", Path("."), Path("."), {})
    assert context.session_name == "ecc-s1"
    rule = SyncRule("r", "text")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rule.name = "other"  # type: ignore[misc]
    assert rule == SyncRule("r", "text") and hash(rule) == hash(SyncRule("r", "text"))


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchType"):
        types_module.NoSuchType  # noqa: B018
    with pytest.raises(ImportError):
        exec("from ecc.contract.types import NoSuchType", {})
