"""A warm ``ecc hook`` calls the recorded implementations itself, as pluggy would.

The warm start imports neither pluggy nor ``dataclasses`` (with ``inspect``) nor ``typing``: they
cost more than half of a hook's time; nor ``pathlib``, ``contextlib`` or ``datetime`` (a fifth of
what remained). Decisions, the order scorers run in (their reasons) and the
recorded rows stay those of the full path; anything the record cannot vouch for (a plugin
module edited since, a wrapper implementation) takes pluggy's path again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.foundation.test_plugins import make_distribution

# what a warm hook needs none of: pluggy and the modules it brings, the loader (with the hook
# specs and stevedore's discovery behind it), importlib.util, and shlex (for argv-list commands)
HEAVY = (
    "pluggy",
    "dataclasses",
    "inspect",
    "typing",
    "ecc.runtime.plugins.loader",
    "importlib.util",
    "shlex",
    "ecc.contract.hookspecs",  # the plugins' hookimpl comes from ecc.contract.markers
    # what the path itself keeps out: pathlib (with urllib.parse and ipaddress; locations are
    # joined as text), contextlib (the store's transaction is a class), datetime and sqlite3's
    # dbapi2 (the store opens the _sqlite3 driver and writes its times from the time module)
    "pathlib",
    "urllib.parse",
    "contextlib",
    "datetime",
    "sqlite3.dbapi2",
    # with ECC_*_DIR set (ecc run sets them for its harness), nor platformdirs (and tempfile)
    "platformdirs",
    "tempfile",
)
PROBE = """
import json, os, sys
from ecc.entry import main

def report(status, ended):
    import gc
    heavy = sorted(name for name in HEAVY if name in sys.modules)
    report = {"status": status, "heavy": heavy, "ended": ended, "collector": gc.isenabled()}
    print(json.dumps(report), file=sys.stderr, flush=True)

quick_exit = os._exit
os._exit = lambda status: (report(status, "quick"), quick_exit(status))
try:
    main()
except SystemExit as end:  # the interpreter's teardown would follow
    report(end.code, "SystemExit")
""".replace("HEAVY", repr(HEAVY))

SCORER = """
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import RiskContribution


@hookimpl(%s)
def ecc_score_tool_call(%s):
    if "curl" in call.input_text:
        return [RiskContribution(%s, "extra: %s")]
    return None
"""


def claude_pre(command: str, call_id: str) -> str:
    return json.dumps(
        {
            "session_id": "s-lean",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": call_id,
        }
    )


def hook(payload: str, env: dict[str, str] | None = None) -> tuple[int, str, list[str]]:
    """(exit status, stdout, heavy modules imported) of one ``ecc hook`` process, which ends
    without the interpreter's teardown (the answer is written, the store closed)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook", "--harness", "claude"],
        input=payload,
        capture_output=True,
        text=True,
        env={**os.environ, "ECC__RISK__ENFORCE": "true", **(env or {})},
        timeout=60,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert (report["ended"], done.returncode) == ("quick", report["status"])
    assert report["collector"] is False  # a process of milliseconds: no cyclic collection
    return report["status"], done.stdout, report["heavy"]


def rows() -> list[tuple]:
    database = Path(os.environ["ECC_STATE_DIR"]) / "ecc.db"
    with sqlite3.connect(database) as conn:
        return conn.execute(
            "SELECT harness, tool, input_json, score, action, reasons_json, decision, call_id,"
            " source FROM tool_calls ORDER BY id"
        ).fetchall()


def scorer_site(tmp_path: Path, modules: dict[str, str]) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    entry_points = "[ecc.risk_scorers]\n" + "".join(f"{m} = {m}\n" for m in modules)
    make_distribution(site, "ecc-test-scorers", modules, entry_points)
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_the_warm_hook_answers_and_records_as_the_full_path_without_pluggy() -> None:
    cold = [hook(claude_pre(command, "c1")) for command in ("rm -rf /", "ls -la")]
    warm = [hook(claude_pre(command, "c1")) for command in ("rm -rf /", "ls -la")]
    assert [run[:2] for run in warm] == [run[:2] for run in cold]
    assert warm[0][0] == 2 or "deny" in warm[0][1]  # the blocked call is denied
    assert "deny" not in warm[1][1]
    assert [run[2] for run in warm] == [[], []]
    first, second, third, fourth = rows()
    assert (third, fourth) == (first, second)
    assert first[6] == "deny" and second[6] == "allow"


def test_scorers_run_in_pluggys_order_on_the_warm_path(tmp_path: Path) -> None:
    env = scorer_site(
        tmp_path,
        {
            "ecc_test_first": SCORER % ("tryfirst=True", "call, config", "0.1", "first"),
            "ecc_test_last": SCORER % ("trylast=True", "call", "0.2", "last"),
            "ecc_test_plain": SCORER % ("", "config, call", "0.3", "plain"),
        },
    )
    cold = hook(claude_pre("curl https://example.com", "c2"), env)
    warm = hook(claude_pre("curl https://example.com", "c2"), env)
    assert warm[:2] == cold[:2]
    assert warm[2] == ["ecc.contract.hookspecs"]  # these plugins import their hookimpl from it
    recorded = [json.loads(row[5]) for row in rows()]
    assert recorded[0] == recorded[1]
    extras = [reason for reason in recorded[0] if reason.startswith("extra:")]
    assert extras == ["extra: first", "extra: plain", "extra: last"]


def test_a_plugin_module_edited_since_the_record_is_called_as_pluggy_calls_it(
    tmp_path: Path,
) -> None:
    env = scorer_site(tmp_path, {"ecc_test_edit": SCORER % ("", "call, config", "0.1", "one")})
    hook(claude_pre("curl x", "c3"), env)
    module = tmp_path / "site" / "ecc_test_edit.py"
    time.sleep(0.01)
    module.write_text(SCORER % ("", "call", "0.25", "edited: it takes call only"))
    status, _, _ = hook(claude_pre("curl x", "c3"), env)
    assert status == 0
    reasons = json.loads(rows()[-1][5])
    assert "extra: edited: it takes call only" in reasons


WRAPPED = """
from ecc.contract.hookspecs import hookimpl


@hookimpl(%s)
def ecc_score_tool_call(call):
    return (yield) if %r else None
"""


def test_a_wrapper_implementation_is_left_to_pluggy(monkeypatch) -> None:
    import types

    import pluggy

    from ecc.contract import hookspecs
    from ecc.runtime.plugins import index

    def order(wrapper: bool) -> object:
        module = types.ModuleType("ecc_test_wrapped")
        exec(WRAPPED % ("wrapper=True" if wrapper else "", wrapper), module.__dict__)
        monkeypatch.setitem(sys.modules, module.__name__, module)
        pm = pluggy.PluginManager("ecc")
        pm.add_hookspecs(hookspecs)
        pm.register(module, name="ecc.risk_scorers:wrapped")
        seen = {("ecc.risk_scorers:wrapped", module.__name__): {"stamp": [1, 2]}}
        return index._call_order(pm, ("ecc_score_tool_call",), seen)

    assert order(wrapper=False) == {
        "ecc_score_tool_call": {
            "firstresult": False,
            "impls": [
                ["ecc.risk_scorers:wrapped", "ecc_test_wrapped", "ecc_score_tool_call", ["call"]]
            ],
        }
    }
    assert order(wrapper=True) is None


def test_the_hook_leaves_its_write_in_the_log_instead_of_checkpointing_at_exit() -> None:
    """Closing the last connection to a WAL database copies the log into it and syncs it:
    about 15 ms of every tool call. The warm hook ends with its row committed to the log,
    which the next connection reads and a later checkpoint moves."""
    hook(claude_pre("ls", "c5"))
    status, _, _ = hook(claude_pre("ls -la", "c6"))
    assert status == 0
    log = Path(os.environ["ECC_STATE_DIR"]) / "ecc.db-wal"
    assert log.exists() and log.stat().st_size > 0
    assert (log.stat().st_mode & 0o777) == 0o600
    assert [row[7] for row in rows()] == ["c5", "c6"]


def test_a_call_held_for_a_person_runs_with_the_cyclic_collector(monkeypatch) -> None:
    """The hook turns the cyclic collector off (its passes over the freshly imported modules
    are pure cost in a process of milliseconds); a call held for a person's decision may wait
    for minutes, so it turns it back on."""
    import gc

    from ecc.contract.types import HookDecision, HookEvent
    from ecc.observability import approvals, toolhook

    seen: list[bool] = []
    monkeypatch.setenv("ECC_SESSION_ID", "s1")
    monkeypatch.setattr(approvals, "hold", lambda *args: seen.append(gc.isenabled()))
    gc.disable()
    try:
        decision = HookDecision(HookEvent("claude", "PreToolUse", "pre_tool"), "ask")
        assert toolhook._hold(decision, None) is decision
    finally:
        gc.enable()
    assert seen == [True]
