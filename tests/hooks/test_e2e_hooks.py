"""``ecc hooks install`` with the real CLIs of the e2e suite and the stub model (``make e2e``).

The stub asks each CLI to run one shell command. With ecc's hook installed and
``risk.enforce = true``: Claude Code and Codex never run ``rm -rf .`` (the tree is intact, the
denial is recorded with its score) and run a harmless command (recorded, allowed); Gemini's and
OpenCode's tool calls are recorded (and ``rm -rf .`` denied) too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecc.store.open import default_path, open_store

E2E = Path(__file__).resolve().parents[1] / "e2e"
sys.path.insert(0, str(E2E))

import clis  # noqa: E402
import stub_server  # noqa: E402

pytestmark = pytest.mark.e2e
TIMEOUT = 240

RUN = {
    "claude": lambda: [
        "claude", "-p", "tidy up", "--model", "claude-sonnet-4-5",
        "--dangerously-skip-permissions",
    ],
    "codex": lambda: [
        "codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust", "tidy up",
    ],
    "gemini": lambda: [
        "gemini", "-p", "tidy up", "-m", "gemini-2.5-flash", "--skip-trust", "--yolo",
    ],
    "opencode": lambda: ["opencode", "run", "--auto", "tidy up"],
}  # fmt: skip
SCOPE = {"claude": "--project", "codex": "--user", "gemini": "--user", "opencode": "--user"}


@pytest.fixture(scope="module")
def cli_bin() -> Path:
    found = clis.bin_dir()
    if found is None:
        if os.environ.get("ECC_E2E_REQUIRED") == "1":
            pytest.fail(f"harness CLIs are not installed in {clis.cache_dir()}")
        pytest.skip("harness CLIs not installed (run `make e2e`, which installs them)")
    return found


@pytest.fixture
def stub(tmp_path: Path) -> Iterator[stub_server.StubServer]:
    server = stub_server.StubServer(tmp_path / "stub.jsonl").start()
    try:
        yield server
    finally:
        server.stop()


def run_with_hook(
    harness: str, command: str, repo: Path, tmp_path: Path, cli_bin: Path, stub, monkeypatch
) -> subprocess.CompletedProcess[str]:
    stub.tool_command = command
    home = tmp_path / "harness-home"
    env = {k: v for k, v in os.environ.items() if k.startswith(("ECC_", "GIT_"))}
    env.pop("ECC_PLUGINS", None)
    env.update(clis.prepare(harness, home, stub.url, cli_bin))
    env["ECC__RISK__ENFORCE"] = "true"
    # a project's hook file runs plain `ecc` (it is committed): this ecc is on the user's PATH
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    install = subprocess.run(
        [sys.executable, "-m", "ecc", "hooks", "install", "--harness", harness, SCOPE[harness]],
        cwd=repo, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return subprocess.run(
        RUN[harness](),
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def calls() -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_tool_calls()


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_rm_rf_is_blocked_and_recorded(
    harness: str, git_repo: Path, tmp_path: Path, cli_bin: Path, stub, monkeypatch
) -> None:
    before = sorted(p.name for p in git_repo.iterdir())
    done = run_with_hook(harness, "rm -rf .", git_repo, tmp_path, cli_bin, stub, monkeypatch)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (git_repo / "README.md").read_text() == "hello\n"  # the tree is intact
    assert set(before) <= {p.name for p in git_repo.iterdir()}
    denied = [c for c in calls() if c["decision"] == "deny"]
    assert denied, calls()
    assert denied[0]["harness"] == harness and denied[0]["score"] == 1.0
    assert json.loads(denied[0]["input_json"])["command"] == "rm -rf ."
    # the agent saw the reason: it came back to the model as the tool's result
    assert any("blocked" in text for r in stub.model_requests() for text in _strings(r["body"]))


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_harmless_call_is_recorded_and_allowed(
    harness: str, git_repo: Path, tmp_path: Path, cli_bin: Path, stub, monkeypatch
) -> None:
    done = run_with_hook(
        harness, "echo hello > out.txt", git_repo, tmp_path, cli_bin, stub, monkeypatch
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (git_repo / "out.txt").read_text().strip() == "hello"
    (row,) = calls()
    assert row["harness"] == harness and row["decision"] == "allow"


@pytest.mark.parametrize("harness", ["gemini", "opencode"])
def test_gemini_and_opencode_tool_calls_are_recorded_and_enforced(
    harness: str, git_repo: Path, tmp_path: Path, cli_bin: Path, stub, monkeypatch
) -> None:
    done = run_with_hook(harness, "rm -rf .", git_repo, tmp_path, cli_bin, stub, monkeypatch)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert (git_repo / "README.md").is_file()
    rows = calls()
    assert rows, done.stdout[-2000:] + done.stderr[-2000:]
    assert rows[0]["harness"] == harness
    assert rows[0]["decision"] == "deny" and rows[0]["score"] == 1.0


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
