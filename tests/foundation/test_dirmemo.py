"""The per-login memo of platformdirs' answers (``ecc.runtime.dirmemo``).

A hook outside ``ecc run`` reads the directories an earlier ecc process found instead of
importing platformdirs, and only while every input platformdirs reads is unchanged; the memo
never names a directory platformdirs would not.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecc.runtime import dirmemo, paths

PINNED = ("ECC_CONFIG_DIR", "ECC_STATE_DIR", "ECC_DATA_DIR", "ECC_CACHE_DIR")
XDG = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")


def platform_answers() -> dict[str, str]:
    return {kind: paths._platform_directory(platformdirs, kind) for kind in paths.KINDS}


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private runtime directory, and a HOME of the test's own."""
    directory = tmp_path / "runtime"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(directory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in XDG:
        monkeypatch.delenv(name, raising=False)
    return directory


def test_an_answer_is_read_back_while_its_inputs_hold(runtime: Path) -> None:
    dirmemo.write(platform_answers())
    assert dirmemo.read(paths.KINDS) == platform_answers()
    assert (runtime / dirmemo.NAME).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "change",
    [
        ("XDG_STATE_HOME", "/elsewhere/state"),
        ("XDG_CONFIG_HOME", "/elsewhere/config"),
        ("HOME", "/another/home"),
        ("XDG_SOMETHING_HOME", "/new/kind"),  # any XDG_*_HOME: platformdirs may read it
    ],
)
def test_a_changed_input_makes_the_memo_stale(
    runtime: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str]
) -> None:
    dirmemo.write(platform_answers())
    monkeypatch.setenv(*change)
    assert dirmemo.read(paths.KINDS) is None


def test_another_platformdirs_makes_the_memo_stale(runtime: Path) -> None:
    dirmemo.write(platform_answers())
    memo = json.loads((runtime / dirmemo.NAME).read_text())
    memo["platformdirs"][1][0] += 1  # the module file as after an upgrade
    (runtime / dirmemo.NAME).write_text(json.dumps(memo))
    assert dirmemo.read(paths.KINDS) is None


@pytest.mark.parametrize(
    "damage",
    [
        "",
        "{",
        "[]",
        '{"inputs": 1}',
        "relative",  # a directory that is not absolute
        "missing",  # a kind left out
    ],
)
def test_a_damaged_memo_is_not_used(runtime: Path, damage: str) -> None:
    dirmemo.write(platform_answers())
    memo = json.loads((runtime / dirmemo.NAME).read_text())
    if damage == "relative":
        memo["directories"]["state"] = "state/ecc"
        damage = json.dumps(memo)
    elif damage == "missing":
        del memo["directories"]["cache"]
        damage = json.dumps(memo)
    (runtime / dirmemo.NAME).write_text(damage)
    assert dirmemo.read(paths.KINDS) is None


def test_a_runtime_dir_others_may_enter_is_neither_read_nor_written(runtime: Path) -> None:
    dirmemo.write(platform_answers())
    runtime.chmod(0o755)
    assert dirmemo.read(paths.KINDS) is None
    (runtime / dirmemo.NAME).unlink()
    dirmemo.write(platform_answers())
    assert not (runtime / dirmemo.NAME).exists()


def test_without_a_runtime_dir_nothing_is_remembered(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/runtime")
    dirmemo.write(platform_answers())
    assert dirmemo.read(paths.KINDS) is None
    assert list(runtime.iterdir()) == []


VALUES = st.one_of(st.none(), st.sampled_from(["/a", "/b/c", "relative", ""]))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=st.fixed_dictionaries({name: VALUES for name in ("HOME", *XDG)}),
    second=st.fixed_dictionaries({name: VALUES for name in ("HOME", *XDG)}),
)
def test_the_memo_never_disagrees_with_platformdirs(
    runtime: Path, first: dict[str, str | None], second: dict[str, str | None]
) -> None:
    """Written under one environment, read under another: nothing, or platformdirs' answer."""
    saved = {name: os.environ.get(name) for name in first}
    try:
        for environment in (first, second):
            for name, value in environment.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if environment is first:
                dirmemo.write(platform_answers())
        remembered = dirmemo.read(paths.KINDS)
        assert remembered is None or remembered == platform_answers()
        if first == second:
            assert remembered == platform_answers()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


PROBE = """
import os, sys
from ecc.entry import main

quick_exit = os._exit  # the hook ends without the interpreter's teardown


def report(status):
    print("platformdirs" in sys.modules, file=sys.stderr, flush=True)
    quick_exit(status)


os._exit = report
main()
"""


def hook(env: dict[str, str], call_id: str) -> bool:
    """Run one ``ecc hook`` (a Claude Code call of ``ls``); whether it imported platformdirs."""
    payload = {
        "session_id": "s-memo",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": call_id,
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "hook", "--harness", "claude"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1] == "True"


def recorded(state_home: Path) -> list[str]:
    with sqlite3.connect(state_home / "ecc" / "ecc.db") as conn:
        return [row[0] for row in conn.execute("SELECT call_id FROM tool_calls ORDER BY id")]


def test_a_hook_outside_a_session_finds_its_directories_in_the_memo(
    runtime: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
    for name in XDG:
        env[name] = str(tmp_path / "xdg" / name.lower())
    assert hook(env, "first") is True  # asks platformdirs, leaves the memo
    assert hook(env, "second") is False  # reads it
    assert recorded(Path(env["XDG_STATE_HOME"])) == ["first", "second"]
    moved = {**env, "XDG_STATE_HOME": str(tmp_path / "moved")}  # the memo is stale: asks again
    assert hook(moved, "third") is True
    assert recorded(tmp_path / "moved") == ["third"]
    assert recorded(Path(env["XDG_STATE_HOME"])) == ["first", "second"]
