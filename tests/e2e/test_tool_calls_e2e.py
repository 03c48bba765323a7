"""Each real CLI's tool call is one row, scored, whether ecc's hook, its output, or both saw it.

The stub model asks the CLI to run one harmless shell command. The session's own hook records
the call as it decides it and the runner parses it from the CLI's output: ``ecc tools`` shows it
once (``source: both``), with the hook's score and decision.
"""

from __future__ import annotations

import json
from pathlib import Path

import clis
import pytest
from clis import ecc, strings

pytestmark = pytest.mark.e2e

COMMAND = "echo hello > out.txt"


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_a_hooked_call_seen_in_the_output_is_one_scored_row(
    harness: str, git_repo: Path, stub, env_for
) -> None:
    stub.tool_command = COMMAND
    env = env_for(harness)
    done = ecc(env, git_repo, "run", "--harness", harness, "--profile", "e2e", "write a file")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    listed = ecc(env, git_repo, "tools", "latest", "--json")
    assert listed.returncode == 0, listed.stderr
    calls = json.loads(listed.stdout)
    mine = [c for c in calls if any(COMMAND in text for text in strings(c["input"]))]
    assert len(mine) == 1, calls
    (call,) = mine
    assert (call["source"], call["decision"]) == ("both", "allow"), call
    assert call["score"] is not None and call["action"] == "allow" and call["reasons"]
