"""Tool calls seen in a harness's output are scored, and each call is one row.

The parser tests feed Claude ``stream-json`` lines to the session's real output parser, with the
real ``ecc hook`` recording the hooked side; the end-to-end test runs a fake ``claude`` on PATH
under ``ecc run``: it prints its tool calls and runs the hook the session gave it (its
``--settings`` file, as Claude Code does), before or after the line, or not at all.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from ecc.runtime.config import view as fastconfig
from ecc.sessions.parsing import OutputParser
from ecc.store.base import Store
from ecc.store.models import Session, State
from tests.conftest import run_ecc

DANGEROUS = "rm -rf /"


def tool_use_line(call_id: str, command: str) -> str:
    block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
    return json.dumps({"type": "assistant", "message": {"content": [block]}})


def hook_payload(call_id: str, command: str) -> dict[str, Any]:
    return {
        "session_id": "claude-1",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call_id,
    }


def _session(store: Store, sid: str = "5e55aa01") -> Session:
    return store.insert_session(
        sid,
        task="t",
        harness="claude",
        state=State.RUNNING,
        reason="test",
        project_dir="/tmp",
        working_dir="/tmp",
    )


def _feed(store: Store, session: Session, *lines: str) -> None:
    parser = OutputParser.for_session(fastconfig.view(), session)
    assert parser is not None
    parser.feed(store, [(n, "stdout", "", line) for n, line in enumerate(lines, 1)])


def _hook(session_id: str, call_id: str, command: str) -> None:
    done = run_ecc(
        "hook",
        "--harness",
        "claude",
        input=json.dumps(hook_payload(call_id, command)),
        env={"ECC_SESSION_ID": session_id},
    )
    assert done.returncode == 0, done.stderr


def test_a_call_seen_only_in_the_output_is_scored_and_observed(store: Store) -> None:
    session = _session(store)
    _feed(store, session, tool_use_line("toolu_9", DANGEROUS), tool_use_line("toolu_10", "ls"))
    danger, harmless = store.list_tool_calls(session.id)
    assert (danger["decision"], danger["source"], danger["call_id"]) == (
        "observed",
        "output",
        "toolu_9",
    )
    assert danger["score"] == 1.0 and danger["action"] == "block" and danger["reasons"]
    assert harmless["score"] is not None and harmless["action"] == "allow"
    assert harmless["decision"] == "observed"


def test_a_hooked_call_and_its_output_line_are_one_row_in_either_order(store: Store) -> None:
    session = _session(store)
    _hook(session.id, "toolu_1", "echo one")  # the hook first, then the line
    _feed(store, session, tool_use_line("toolu_1", "echo one"))
    _feed(store, session, tool_use_line("toolu_2", "echo two"))  # the line first, then the hook
    _hook(session.id, "toolu_2", "echo two")
    rows = store.list_tool_calls(session.id)
    assert [(r["call_id"], r["source"], r["decision"]) for r in rows] == [
        ("toolu_1", "both", "allow"),
        ("toolu_2", "both", "allow"),
    ]


FAKE_CLAUDE = r"""
import json, os, shlex, subprocess, sys, time

def hook_command():
    for arg in sys.argv[1:]:
        if arg.startswith("--settings="):
            with open(arg.split("=", 1)[1]) as handle:
                settings = json.load(handle)
            return settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return shlex.join([sys.executable, "-m", "ecc", "hook", "--harness", "claude"])

def run_hook(call):
    payload = {"session_id": "fake-1", "cwd": os.getcwd(), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": call["command"]},
               "tool_use_id": call["id"]}
    subprocess.run(hook_command(), shell=True, input=json.dumps(payload), text=True,
                   check=True, capture_output=True)

def stored(call_id):
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store
    with open_store(config=view()) as store:
        return any(row["call_id"] == call_id
                   for row in store.list_tool_calls(os.environ["ECC_SESSION_ID"]))

def line(call):
    block = {"type": "tool_use", "id": call["id"], "name": "Bash",
             "input": {"command": call["command"]}}
    print(json.dumps({"type": "assistant", "message": {"content": [block]}}), flush=True)

print(json.dumps({"type": "system", "subtype": "init", "session_id": "fake-1"}), flush=True)
for call in json.loads(os.environ["FAKE_CALLS"]):
    if call["hook"] == "before":
        run_hook(call)
    line(call)
    if call["hook"] == "after":  # once the runner stored the line's call
        deadline = time.monotonic() + 30
        while not stored(call["id"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        run_hook(call)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                  "session_id": "fake-1", "usage": {"input_tokens": 1, "output_tokens": 1}}),
      flush=True)
"""


def _fake_claude(tmp_path: Path, calls: list[dict[str, str]]) -> dict[str, str]:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    program = bin_dir / "claude"
    program.write_text(f"#!{sys.executable}\n{FAKE_CLAUDE}")
    program.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_CALLS": json.dumps(calls)}


def test_a_session_lists_each_call_once_with_its_source(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    env = _fake_claude(
        tmp_path,
        [
            {"id": "toolu_a", "command": "echo before > a.txt", "hook": "before"},
            {"id": "toolu_b", "command": "echo after > b.txt", "hook": "after"},
            {"id": "toolu_c", "command": DANGEROUS, "hook": "none"},
        ],
    )
    done = run_ecc("run", "--harness", "claude", "make files", cwd=git_repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    session = store.latest_session()
    assert session is not None and session.state.value == "completed", session

    listed = run_ecc("tools", session.id, "--json")
    assert listed.returncode == 0, listed.stderr
    calls = json.loads(listed.stdout)
    assert [(c["tool"], c["source"], c["decision"]) for c in calls] == [
        ("Bash", "both", "allow"),
        ("Bash", "both", "allow"),
        ("Bash", "output", "observed"),
    ]
    assert calls[2]["input_excerpt"] == DANGEROUS and calls[2]["action"] == "block"
    assert all(c["score"] is not None and c["reasons"] and c["created_at"] for c in calls)

    status = json.loads(run_ecc("status", session.id, "--json").stdout)
    assert status["tool_calls"] == calls

    text = run_ecc("tools", session.id[:6])
    assert text.returncode == 0, text.stderr
    assert "echo before > a.txt" in text.stdout and "observed" in text.stdout
    assert len([line for line in text.stdout.splitlines() if "Bash" in line]) == 3


def test_tools_of_an_unknown_session_is_a_one_line_error() -> None:
    done = run_ecc("tools", "nosuchsession")
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "nosuchsession" in done.stderr


def test_agent_text_in_a_listing_reaches_no_terminal_raw(store: Store) -> None:
    session = _session(store)
    store.record_tool_call(
        session_id=session.id,
        harness="claude",
        tool="Bash\x1b]0;owned\x07",
        input={"command": "echo \x1b[31mred\x1b[0m\nsecond line"},
        score=0.2,
        action="allow",
        reasons=["shell \x1b[2J"],
        decision="observed",
        source="output",
    )
    text = run_ecc("tools", session.id)
    assert text.returncode == 0, text.stderr
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout
    (line,) = [row for row in text.stdout.splitlines() if row.startswith(("0", "1", "2"))]
    assert "Bash" in line and "echo red second line" in line
    raw = run_ecc("tools", session.id, "--json")
    assert "\x1b" not in raw.stdout
    assert json.loads(raw.stdout)[0]["input"]["command"].startswith("echo \x1b[31m")
