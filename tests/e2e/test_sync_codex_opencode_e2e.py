"""``ecc sync`` seen by the real codex and OpenCode CLIs (``make e2e``; loopback only).

Codex: its prompt input (``codex debug prompt-input``) carries ``AGENTS.md`` with the synced
rules and commands, and a synced project hook runs on each of its events in a trusted project
(``--dangerously-bypass-hook-trust`` stands in for the user trusting it in ``/hooks``) next to
ecc's own risk hook, which the merge kept. OpenCode: the stub model's request carries the synced
rules, a synced command runs as ``opencode run --command``, and the synced hooks plugin runs
each project hook on its event.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import stub_server
from clis import TIMEOUT, ecc, strings

pytestmark = pytest.mark.e2e

RULE = "Name every branch after a ZEBRACORN-RULE animal."
PERSONS = "A person's own words about the project."
COMMAND = "---\ndescription: Review a branch QUOKKA-DESC\n---\nReview QUOKKA-$1 now: $ARGUMENTS.\n"
EVENTS = ("pre_tool", "post_tool", "session_start", "session_end", "prompt_submit")


def recorder(log: Path, event: str) -> str:
    """A hook command appending ``{"event", "stdin"}`` to ``log`` (JSON lines)."""
    code = (
        "import json, sys; "
        f"open({str(log)!r}, 'a').write(json.dumps({{'event': {event!r}, "
        "'stdin': sys.stdin.read()}) + chr(10))"
    )
    return f"{sys.executable} -c {json.dumps(code)}"


def project(repo: Path, harness: str, log: Path) -> None:
    """The shared source: AGENTS.md, one rule, one command, a hook on every event; trusted."""
    (repo / "AGENTS.md").write_text(f"# Project\n\n{PERSONS}\n")
    (repo / "rules").mkdir()
    (repo / "rules" / "branches.md").write_text(f"---\ndescription: Branch names\n---\n{RULE}\n")
    (repo / "commands").mkdir()
    (repo / "commands" / "review.md").write_text(COMMAND)
    hooks = "".join(
        f"[[sync.hooks]]\nevent = {json.dumps(e)}\ncommand = {json.dumps(recorder(log, e))}\n"
        for e in EVENTS
    )
    (repo / ".ecc").mkdir(exist_ok=True)
    (repo / ".ecc" / "config.toml").write_text(f"[sync]\nharnesses = [{harness!r}]\n{hooks}")


def ok(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = ecc(env, cwd, *args)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def cli(env: dict[str, str], cwd: Path, *argv: str) -> str:
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout + done.stderr


def ran(log: Path) -> dict[str, dict[str, Any]]:
    """Each recorded event's first payload."""
    seen: dict[str, dict[str, Any]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line)
        seen.setdefault(entry["event"], json.loads(entry["stdin"] or "{}"))
    return seen


def synced(env: dict[str, str], repo: Path) -> None:
    ok(env, repo, "trust")  # the project's own hooks run programs
    ok(env, repo, "sync")
    assert "nothing to write" in ok(env, repo, "sync")  # a second sync is a no-op
    ok(env, repo, "sync", "--check")


# -- codex ------------------------------------------------------------------------------------


def test_codex_prompt_input_carries_agents_md_with_the_synced_rules(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    env = env_for("codex")
    project(git_repo, "codex", tmp_path / "hooks.jsonl")
    synced(env, git_repo)
    prompt = cli(env, git_repo, "codex", "debug", "prompt-input")
    assert RULE in prompt and PERSONS in prompt  # AGENTS.md, the person's part and ecc's
    assert "/review" in prompt and "QUOKKA-DESC" in prompt  # the command, as an instruction

    (git_repo / "rules" / "branches.md").unlink()
    ok(env, git_repo, "sync")
    prompt = cli(env, git_repo, "codex", "debug", "prompt-input")
    assert RULE not in prompt and PERSONS in prompt and "QUOKKA-DESC" in prompt


def test_codex_runs_each_synced_hook_beside_eccs_risk_hook(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    env = env_for("codex")
    log = tmp_path / "hooks.jsonl"
    project(git_repo, "codex", log)
    ok(env, git_repo, "hooks", "install", "--harness", "codex", "--project")
    synced(env, git_repo)
    hooks = json.loads((git_repo / ".codex" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert any("hook --harness codex" in c for c in commands)  # ecc's risk hook stayed
    assert sum(c.endswith(" # ecc-sync") for c in commands) == len(EVENTS)

    with open(Path(env["CODEX_HOME"]) / "config.toml", "a") as config:
        config.write(f'[projects.{json.dumps(str(git_repo))}]\ntrust_level = "trusted"\n')
    cli(
        env, git_repo, "codex", "exec", "--skip-git-repo-check", "--json",
        "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
        "--", "make out.txt",
    )  # fmt: skip
    seen = ran(log)
    assert set(seen) == set(EVENTS)
    assert seen["pre_tool"]["hook_event_name"] == "PreToolUse"
    assert "echo hello" in json.dumps(seen["post_tool"]["tool_input"])
    assert (git_repo / "out.txt").exists()


# -- OpenCode ---------------------------------------------------------------------------------


def test_opencode_loads_the_synced_rules_and_command_and_runs_the_hooks(
    env_for: Callable[..., dict[str, str]],
    git_repo: Path,
    tmp_path: Path,
    stub: stub_server.StubServer,
) -> None:
    env = env_for("opencode")
    log = tmp_path / "hooks.jsonl"
    project(git_repo, "opencode", log)
    synced(env, git_repo)
    config = git_repo / "opencode.json"
    assert not config.exists()  # nothing for it: AGENTS.md and .opencode/ are read by themselves

    cli(
        env, git_repo, "opencode", "run", "--format=json", f"--dir={git_repo}",
        "--model=stub/stub-model", "--command", "review", "--", "main", "today",
    )  # fmt: skip
    bodies = [list(strings(request["body"])) for request in stub.model_requests()]
    # the agent's requests (not the title's): AGENTS.md with the rules, and the command's
    # prompt as OpenCode substitutes it (the last $N takes the rest of the words)
    agent = [texts for texts in bodies if any(RULE in t for t in texts)]
    assert agent, "no request to the model carried the synced rules"
    assert any(PERSONS in t for t in agent[0])
    assert any("Review QUOKKA-main today now: main today." in t for t in agent[0])
    seen = ran(log)
    assert set(seen) == set(EVENTS)
    assert seen["pre_tool"]["tool_name"] == "bash" and seen["pre_tool"]["cwd"] == str(git_repo)
    assert "QUOKKA-main" in seen["prompt_submit"]["prompt"]

    copy = git_repo / ".opencode" / "commands" / "review.md"
    copy.write_text(copy.read_text() + "A hand edit.\n")
    drifted = ecc(env, git_repo, "sync", "--check")
    assert drifted.returncode == 1 and ".opencode/commands/review.md" in drifted.stderr
    copy.unlink()  # and back: the copy ecc wrote, as the source gives it
    ok(env, git_repo, "sync")

    (git_repo / "rules" / "branches.md").unlink()
    ok(env, git_repo, "sync")
    assert RULE not in (git_repo / "AGENTS.md").read_text()
    assert PERSONS in (git_repo / "AGENTS.md").read_text()
