"""``ecc hook`` end to end: real payload shapes of each harness (spec real-harnesses.md) on
stdin, the protocol answer (exit code, stdout, stderr) and the row recorded in the store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.store.models import State
from ecc.store.open import default_path, open_store
from tests.conftest import ECC, run_ecc

ENFORCE = {"ECC__RISK__ENFORCE": "true"}
# A person with this ecc on PATH: what a project's (committed) hook file relies on.
ON_PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"


def claude_pre(command: str, event: str = "PreToolUse") -> dict:
    return {
        "session_id": "8e1c2d3a-claude",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work/project",
        "hook_event_name": event,
        "prompt_id": "p1",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_use_id": "toolu_01",
    }


def codex_pre(command: str) -> dict:
    return {
        "session_id": "019a-codex",
        "transcript_path": None,
        "cwd": "/work/project",
        "hook_event_name": "PreToolUse",
        "turn_id": "t1",
        "model": "stub-model",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    }


def gemini_before(command: str) -> dict:
    return {
        "session_id": "g-1",
        "transcript_path": "/tmp/g.json",
        "cwd": "/work/project",
        "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-30T00:00:00.000Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "run it"},
    }


def opencode_before(command: str) -> dict:  # what ecc's OpenCode plugin module pipes in
    return {
        "event": "tool.execute.before",
        "tool": "bash",
        "sessionID": "ses_1",
        "callID": "call_1",
        "args": {"command": command, "description": "run it"},
    }


def hook(
    harness: str,
    payload: object,
    env: dict[str, str] | None = None,
    *extra: str,
    cwd: Path | None = None,
):
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return run_ecc("hook", "--harness", harness, *extra, input=raw, env=env, cwd=cwd)


def rows(session_id: str | None = None) -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_tool_calls(session_id)


def make_session(session_id: str = "s1") -> str:
    with open_store(default_path()) as store:
        store.insert_session(
            session_id,
            task="t",
            harness="claude",
            state=State.RUNNING,
            reason="test",
            project_dir="/tmp",
            working_dir="/tmp",
        )
    return session_id


def test_claude_blocks_rm_rf_and_records_the_denial_against_the_session() -> None:
    session = make_session()
    done = hook("claude", claude_pre("rm -rf ."), {**ENFORCE, "ECC_SESSION_ID": session})
    assert done.returncode == 2
    assert done.stdout == ""
    assert "blocked" in done.stderr and "irreversible" in done.stderr
    (row,) = rows(session)
    assert row["tool"] == "Bash" and row["harness"] == "claude"
    assert json.loads(row["input_json"]) == {"command": "rm -rf .", "description": "run it"}
    assert row["score"] == 1.0 and row["action"] == "block" and row["decision"] == "deny"
    assert any("irreversible" in reason for reason in row["reasons"])


def test_claude_allows_and_records_a_harmless_call() -> None:
    done = hook("claude", claude_pre("ls -la"), ENFORCE)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (row,) = rows()
    assert row["session_id"] is None  # unattached: no ECC_SESSION_ID
    assert row["decision"] == "allow" and row["action"] == "allow"
    assert row["score"] == pytest.approx(0.20)


def test_claude_asks_for_require_confirmation() -> None:
    done = hook("claude", claude_pre("rm -rf node_modules"), ENFORCE)
    assert done.returncode == 0
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert answer["permissionDecision"] == "ask"
    assert "needs confirmation" in answer["permissionDecisionReason"]
    assert rows()[0]["decision"] == "ask"


def test_without_enforce_everything_is_allowed_but_scored() -> None:
    done = hook("claude", claude_pre("rm -rf /"))
    assert (done.returncode, done.stdout) == (0, "")
    (row,) = rows()
    assert row["action"] == "block" and row["decision"] == "allow"


def test_codex_denies_block_and_require_confirmation() -> None:
    blocked = hook("codex", codex_pre("rm -rf ."), ENFORCE)
    assert blocked.returncode == 2 and "blocked" in blocked.stderr
    confirm = hook("codex", codex_pre("git reset --hard HEAD~1"), ENFORCE)
    assert confirm.returncode == 2 and "cannot ask" in confirm.stderr
    assert [r["decision"] for r in rows()] == ["deny", "deny"]
    assert all(r["harness"] == "codex" for r in rows())


def test_gemini_before_tool_is_normalised_and_denied() -> None:
    done = hook("gemini", gemini_before("rm -rf ."), ENFORCE)
    assert done.returncode == 2 and "blocked" in done.stderr
    (row,) = rows()
    assert row["tool"] == "run_shell_command" and row["score"] == 1.0
    assert hook("gemini", gemini_before("echo hi"), ENFORCE).returncode == 0


def test_opencode_payload_is_normalised_and_denied() -> None:
    done = hook("opencode", opencode_before("rm -rf ."), ENFORCE)
    assert done.returncode == 2 and "blocked" in done.stderr
    assert rows()[0]["tool"] == "bash" and rows()[0]["harness"] == "opencode"


def test_events_that_are_not_tool_calls_are_allowed_and_not_recorded() -> None:
    start = {"session_id": "x", "cwd": "/", "hook_event_name": "SessionStart", "source": "startup"}
    done = hook("claude", start, ENFORCE)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    post = claude_pre("rm -rf .", "PostToolUse") | {"tool_response": {"stdout": ""}}
    assert hook("claude", post, ENFORCE).returncode == 0
    assert rows() == []


def log_text() -> str:
    path = Path(os.environ["ECC_STATE_DIR"]) / "logs" / "hook.log"
    return path.read_text() if path.exists() else ""


def test_internal_errors_fail_open_and_are_logged_without_the_payload() -> None:
    secret_payload = '{"tool_name": "Bash", "tool_input": {"command": "echo sk-SECRET'  # broken
    done = hook("claude", secret_payload, ENFORCE)
    assert (done.returncode, done.stdout) == (0, "")
    log = log_text()
    assert "not JSON" in log
    assert "sk-SECRET" not in log
    unknown = hook("nosuch", claude_pre("rm -rf ."), ENFORCE)
    assert unknown.returncode == 0
    assert "no installed adapter" in log_text()


def test_fail_closed_denies_on_internal_error() -> None:
    env = {**ENFORCE, "ECC__RISK__FAIL_CLOSED": "true"}
    done = hook("claude", "{not json", env)
    assert done.returncode == 2
    assert "fail_closed" in done.stderr


def test_a_broken_store_does_not_change_the_decision(isolated_env: Path) -> None:
    blocker = isolated_env / "not-a-dir"
    blocker.write_text("")
    env = {**ENFORCE, "ECC__STORE__URL": str(blocker / "ecc.db")}
    done = hook("claude", claude_pre("rm -rf ."), env)
    assert done.returncode == 2
    assert "could not record" in log_text()


def test_warm_hook_path_skips_pydantic_and_the_adapter_packages() -> None:
    assert hook("claude", claude_pre("ls"), ENFORCE).returncode == 0  # compiles the caches
    probe = (
        "import sys, json\n"
        "from ecc.observability.toolhook import run\n"
        "payload = json.dumps({'hook_event_name': 'PreToolUse', 'tool_name': 'Bash',"
        " 'tool_input': {'command': 'rm -rf .'}}).encode()\n"
        "response = run('claude', '', payload)\n"
        "heavy = [m for m in ('pydantic', 'stevedore', 'ecc.runtime.config.model',"
        " 'ecc_adapter_claude') if m in sys.modules]\n"
        "adapters = sorted(m for m in sys.modules if m.startswith('ecc_adapter_'))\n"
        "print(json.dumps({'exit': response.exit_code, 'heavy': heavy, 'adapters': adapters}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, **ENFORCE},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # only the calling harness's own hook module: the others' would never be asked
    answer = {"exit": 2, "heavy": [], "adapters": ["ecc_adapter_claude.integration"]}
    assert json.loads(done.stdout) == answer
    assert len(rows()) == 2


def test_a_recorded_module_that_no_longer_loads_alone_falls_back_to_the_full_path() -> None:
    assert hook("claude", claude_pre("ls"), ENFORCE).returncode == 0  # records the hot modules
    [entry] = list((Path(os.environ["ECC_CACHE_DIR"]) / "hook").glob("*.json"))
    record = json.loads(entry.read_text())
    broken = Path(os.environ["ECC_CACHE_DIR"]) / "broken_integration.py"
    broken.write_text("raise ImportError('moved away')\n")
    for module in record["modules"]:
        if module["module"] == "ecc_adapter_claude.integration":
            module["file"] = str(broken)
    entry.write_text(json.dumps(record))
    done = hook("claude", claude_pre("rm -rf ."), ENFORCE)
    assert done.returncode == 2 and "blocked" in done.stderr  # the adapter answered, not a failure
    assert "internal error" not in log_text()
    rewritten = json.loads(entry.read_text())  # and the full path recorded the modules again
    files = {module["module"]: module["file"] for module in rewritten["modules"]}
    assert files["ecc_adapter_claude.integration"] != str(broken)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_opencode_plugin_module_blocks_through_node(git_repo: Path) -> None:
    """The installed JS module, run by node as OpenCode would: a block throws, a safe call
    passes and both are recorded."""
    assert run_ecc("hooks", "install", "--harness", "opencode", cwd=git_repo).returncode == 0
    module = git_repo / ".opencode/ecc-hooks.js"
    driver = git_repo / "drive.mjs"
    driver.write_text(
        f"import {{ EccHooks }} from {json.dumps(module.as_uri())};\n"
        "const hooks = await EccHooks({});\n"
        "const before = hooks['tool.execute.before'];\n"
        "await before({tool: 'bash', sessionID: 's', callID: 'c1'}, {args: {command: 'ls'}});\n"
        "try {\n"
        "  await before({tool: 'bash', sessionID: 's', callID: 'c2'},"
        " {args: {command: 'rm -rf .'}});\n"
        "  console.log('NOT BLOCKED');\n"
        "} catch (error) { console.log('BLOCKED: ' + error.message); }\n"
    )
    done = subprocess.run(
        ["node", str(driver)],
        capture_output=True,
        text=True,
        env={**os.environ, **ENFORCE, "PATH": ON_PATH},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("BLOCKED: ecc: bash call blocked")
    assert [r["decision"] for r in rows()] == ["allow", "deny"]


def test_installed_claude_command_runs_as_written(git_repo: Path) -> None:
    """The command ``ecc hooks install`` writes is a working command line: in a project's file
    (committed, shared) plain ``ecc`` from PATH; in the user's own file this ecc, absolutely."""
    assert run_ecc("hooks", "install", "--harness", "claude", cwd=git_repo).returncode == 0
    settings = json.loads((git_repo / ".claude/settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert command == "ecc hook --harness claude"  # no path into one person's virtualenv
    done = subprocess.run(
        command,
        shell=True,  # the harness runs it through a shell, as written
        input=json.dumps(claude_pre("rm -rf .")),
        capture_output=True,
        text=True,
        cwd=git_repo,
        env={**os.environ, **ENFORCE, "PATH": ON_PATH},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert run_ecc("hooks", "install", "--harness", "claude", "--user").returncode == 0
    user = json.loads((Path.home() / ".claude/settings.json").read_text())
    command = user["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    venv_script = str(Path(ECC[0]).parent / "ecc")
    assert command.split()[0] in {venv_script, ECC[0]}  # absolute: PATH does not matter


def test_plain_hook_command_line_skips_click_and_other_forms_still_work() -> None:
    probe = (
        "import os, sys, json\n"
        "sys.argv = ['ecc', 'hook', '--harness=claude']\n"
        "from ecc.entry import main\n"
        "quick_exit = os._exit\n"
        "def report(status):\n"
        "    print(json.dumps({'status': status, 'click': 'click' in sys.modules}), flush=True)\n"
        "    quick_exit(status)\n"
        "os._exit = report\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps(claude_pre("rm -rf /")),
        capture_output=True,
        text=True,
        env={**os.environ, **ENFORCE},
        timeout=60,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == {"status": 2, "click": False}
    helped = run_ecc("hook", "--help")
    assert helped.returncode == 0 and "--harness" in helped.stdout
    assert run_ecc("hook").returncode == 2  # click's usage error: --harness is required
