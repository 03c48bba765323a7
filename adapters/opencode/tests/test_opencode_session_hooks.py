"""A managed OpenCode session's own hook: the plugin it loads through OPENCODE_CONFIG_CONTENT,
and that plugin run by node as OpenCode runs it (asynchronously, with its timeout)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import ecc_adapter_opencode as opencode
import pytest
from ecc_adapter_opencode.integration import module_text

from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext, SessionEnforcement
from ecc.runtime.config.model import Config

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# A stand-in for ``ecc hook``: keeps its stdin and argv, waits, answers as told.
FAKE_HOOK = """
import json, sys, time
from pathlib import Path
out = Path(sys.argv[1])
out.write_text(json.dumps({"argv": sys.argv[2:], "stdin": sys.stdin.read()}))
time.sleep(float(sys.argv[2]))
sys.stderr.write(sys.argv[3])
sys.exit(int(sys.argv[4]))
"""


def launch(tmp_path: Path, argv: tuple[str, ...] = ("/opt/ecc", "hook"), timeout: int = 630):
    directory = tmp_path / "session-hooks"
    directory.mkdir(mode=0o700, exist_ok=True)
    enforcement = SessionEnforcement(
        command=" ".join(argv), argv=argv, timeout_secs=timeout, directory=directory
    )
    return LaunchContext(
        session_id="sess-9999",
        task="t",
        working_dir=tmp_path,
        project_dir=tmp_path,
        config=Config(),
        enforcement=enforcement,
    )


def test_the_capability_is_declared() -> None:
    assert "session_hooks" in opencode.ecc_harnesses().capabilities


def test_an_enforced_session_loads_its_plugin_through_the_config_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENCODE_CONFIG_CONTENT", raising=False)
    argv = ("/opt/ecc/bin/ecc", "hook", "--harness", "opencode", "--managed")
    env = opencode.ecc_session_env("opencode", launch(tmp_path, argv))
    assert env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    module = tmp_path / "session-hooks" / "ecc-session-hooks.js"
    assert json.loads(env["OPENCODE_CONFIG_CONTENT"]) == {"plugin": [module.as_uri()]}
    assert module.stat().st_mode & 0o077 == 0
    text = module.read_text()
    assert json.dumps([*argv, "--event", "tool.execute.before"]) in text
    assert "const TIMEOUT_MS = 630000;" in text and "const FAIL_CLOSED = true;" in text
    assert "spawnSync" not in text


def test_a_config_content_already_set_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = {"model": "m/x", "plugin": ["their-plugin"]}
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps(mine))
    ctx = launch(tmp_path)
    config = json.loads(opencode.ecc_session_env("opencode", ctx)["OPENCODE_CONFIG_CONTENT"])
    module = tmp_path / "session-hooks" / "ecc-session-hooks.js"
    assert config == {"model": "m/x", "plugin": ["their-plugin", module.as_uri()]}
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps(config))  # a nested ecc run
    again = json.loads(opencode.ecc_session_env("opencode", ctx)["OPENCODE_CONFIG_CONTENT"])
    assert again == config


@pytest.mark.parametrize("value", ["{not json", "[1]", '{"plugin": "x"}'])
def test_a_config_content_ecc_cannot_extend_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", value)
    with pytest.raises(EccError, match="OPENCODE_CONFIG_CONTENT") as raised:
        opencode.ecc_session_env("opencode", launch(tmp_path))
    assert "\n" not in str(raised.value)


def test_a_session_without_enforcement_gets_no_plugin() -> None:
    plain = LaunchContext(
        session_id="s", task="t", working_dir=Path("/r"), project_dir=Path("/r"), config=Config()
    )
    assert opencode.ecc_session_env("opencode", plain) == {"OPENCODE_DISABLE_AUTOUPDATE": "1"}


def drive(module: Path, driver: Path) -> dict[str, Any]:
    """Call the module's ``tool.execute.before`` once, as OpenCode would, counting the ticks of
    a 50 ms timer meanwhile (a blocked event loop counts none)."""
    driver.write_text(
        f"const mod = await import({json.dumps(module.as_uri())});\n"
        "const hooks = await Object.values(mod)[0]({});\n"
        "let ticks = 0;\n"
        "const timer = setInterval(() => { ticks += 1; }, 50);\n"
        "let outcome;\n"
        "try {\n"
        "  await hooks['tool.execute.before']({tool: 'bash', sessionID: 's', callID: 'c1'},"
        " {args: {command: 'git push --force'}});\n"
        "  outcome = 'ALLOWED';\n"
        "} catch (error) { outcome = 'DENIED: ' + error.message; }\n"
        "clearInterval(timer);\n"
        "console.log(JSON.stringify({outcome, ticks}));\n"
    )
    done = subprocess.run(["node", str(driver)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fake_argv(tmp_path: Path, seconds: float, message: str, status: int) -> tuple[str, ...]:
    script = tmp_path / "fake_hook.py"
    script.write_text(FAKE_HOOK)
    seen = tmp_path / "seen.json"
    return (sys.executable, str(script), str(seen), str(seconds), message, str(status))


@needs_node
def test_a_held_call_waits_without_blocking_the_event_loop_and_a_denial_throws(
    tmp_path: Path,
) -> None:
    ctx = launch(tmp_path, fake_argv(tmp_path, 1.0, "ecc: bash call blocked", 2))
    opencode.ecc_session_env("opencode", ctx)
    result = drive(tmp_path / "session-hooks" / "ecc-session-hooks.js", tmp_path / "d.mjs")
    assert result["outcome"] == "DENIED: ecc: bash call blocked"
    assert result["ticks"] >= 5  # the loop ran while the hook was deciding
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["argv"][-2:] == ["--event", "tool.execute.before"]
    payload = json.loads(seen["stdin"])
    assert payload == {
        "event": "tool.execute.before",
        "tool": "bash",
        "sessionID": "s",
        "callID": "c1",
        "args": {"command": "git push --force"},
    }


@needs_node
def test_an_allowed_call_goes_on(tmp_path: Path) -> None:
    ctx = launch(tmp_path, fake_argv(tmp_path, 0, "", 0))
    opencode.ecc_session_env("opencode", ctx)
    result = drive(tmp_path / "session-hooks" / "ecc-session-hooks.js", tmp_path / "d.mjs")
    assert result["outcome"] == "ALLOWED"


@needs_node
def test_a_hook_past_its_timeout_is_killed_and_the_call_denied(tmp_path: Path) -> None:
    ctx = launch(tmp_path, fake_argv(tmp_path, 30, "", 0), timeout=1)
    opencode.ecc_session_env("opencode", ctx)
    result = drive(tmp_path / "session-hooks" / "ecc-session-hooks.js", tmp_path / "d.mjs")
    assert result["outcome"] == "DENIED: ecc's hook did not answer within 1 s"


@needs_node
def test_a_hook_that_cannot_start_denies_the_call(tmp_path: Path) -> None:
    ctx = launch(tmp_path, (str(tmp_path / "no-such-ecc"), "hook"))
    opencode.ecc_session_env("opencode", ctx)
    result = drive(tmp_path / "session-hooks" / "ecc-session-hooks.js", tmp_path / "d.mjs")
    assert result["outcome"].startswith("DENIED: ecc's hook could not start")


def installed_module(tmp_path: Path, body: str, timeout: int) -> Path:
    """The module ``ecc hooks install`` writes, with ``body`` (Python) standing in for ecc."""
    script = tmp_path / "installed_fake.py"
    script.write_text(body)
    text = module_text({"command": f"{sys.executable} {script}", "hook_timeout": timeout})
    module = tmp_path / "ecc-hooks.js"
    module.write_text(text)
    return module


@needs_node
def test_the_installed_module_waits_without_blocking_the_event_loop(tmp_path: Path) -> None:
    body = "import sys, time\ntime.sleep(1)\nsys.stderr.write('blocked')\nsys.exit(2)\n"
    module = installed_module(tmp_path, body, timeout=60)
    assert "spawnSync" not in module.read_text()
    result = drive(module, tmp_path / "d.mjs")
    assert result == {"outcome": "DENIED: blocked", "ticks": result["ticks"]}
    assert result["ticks"] >= 5


@needs_node
def test_the_installed_module_still_fails_open_past_its_timeout(tmp_path: Path) -> None:
    module = installed_module(tmp_path, "import time\ntime.sleep(30)\n", timeout=1)
    assert "const FAIL_CLOSED = false;" in module.read_text()
    assert drive(module, tmp_path / "d.mjs")["outcome"] == "ALLOWED"
