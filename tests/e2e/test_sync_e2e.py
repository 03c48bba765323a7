"""``ecc sync`` seen by the real Claude Code, Gemini CLI, codex and OpenCode (``make e2e``;
loopback only).

One shared source (``AGENTS.md``, ``rules/``, ``commands/``, ``[[sync.hooks]]``) goes through
``ecc sync`` into each CLI's own files; then the CLI runs against the stub model:

* Claude Code: the request to the model carries the rules (``CLAUDE.md``'s import of
  ``AGENTS.md`` and ``.claude/rules/``), ``claude -p "/review ARGS"`` sends the synced command's
  expanded prompt, and each synced hook runs on its event beside ecc's own risk hook;
* Gemini CLI, in a trusted folder: the request carries ``GEMINI.md`` (the rules, with
  ``AGENTS.md`` imported), ``gemini -p "/review ARGS"`` sends the synced TOML command's prompt,
  and each synced hook runs on its event beside ecc's risk hook;
* codex: its prompt input (``codex debug prompt-input``) carries ``AGENTS.md`` with the synced
  rules and commands, and in a trusted project each synced hook runs on its event beside ecc's
  risk hook (``--dangerously-bypass-hook-trust`` standing in for trusting each in ``/hooks``);
* OpenCode: the request carries the rules (``AGENTS.md``), ``opencode run --command review``
  sends the synced command's prompt, each hook of the synced plugin runs on its event, and a
  hand edit of a copy fails ``ecc sync --check``, naming it.
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
from clis import STUB_MODEL, TIMEOUT, ecc, strings

pytestmark = pytest.mark.e2e

RULE = "Name every branch after a ZEBRACORN-RULE animal."
PERSONS = "Be kind to the PANGOLIN-PERSON tests."
OWN_CLAUDE_MD = "# Notes of a person\n\nKeep the WOMBAT-OWN changelog short.\n"
COMMAND = (
    "---\ndescription: Review a branch QUOKKA-DESC\nargument-hint: <branch> <when>\n---\n"
    "Review QUOKKA-$1 now: $ARGUMENTS.\n"
)
EVENTS = ("pre_tool", "post_tool", "session_start", "session_end", "prompt_submit")


# -- shared set-up ----------------------------------------------------------------------------


def recorder(log: Path, event: str) -> str:
    """A hook command appending ``{"event", "stdin"}`` to ``log`` (JSON lines)."""
    code = (
        "import json, sys; "
        f"open({str(log)!r}, 'a').write(json.dumps({{'event': {event!r}, "
        "'stdin': sys.stdin.read()}) + chr(10))"
    )
    return f"{sys.executable} -c {json.dumps(code)}"


def project(repo: Path, harness: str, log: Path) -> None:
    """The shared source: AGENTS.md, one rule, one command, a hook on every event."""
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


def synced(env: dict[str, str], repo: Path) -> None:
    ok(env, repo, "trust")  # the project's own hooks run programs
    ok(env, repo, "sync")
    assert "nothing to write" in ok(env, repo, "sync")  # a second sync is a no-op
    ok(env, repo, "sync", "--check")


def ran(log: Path) -> dict[str, dict[str, Any]]:
    """Each recorded event's first payload."""
    seen: dict[str, dict[str, Any]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line)
        seen.setdefault(entry["event"], json.loads(entry["stdin"] or "{}"))
    return seen


def request_texts(stub: stub_server.StubServer) -> list[list[str]]:
    """Every string of each request to the model, one list per request."""
    return [list(strings(request["body"])) for request in stub.model_requests()]


def carrying(stub: stub_server.StubServer, text: str) -> list[list[str]]:
    return [texts for texts in request_texts(stub) if any(text in t for t in texts)]


def with_ecc_on_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` where a project's ``ecc hook --harness NAME`` (ecc's risk hook, as ``ecc hooks
    install --project`` writes it for everyone's PATH) finds this checkout's ``ecc``."""
    return {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}


def hook_commands(settings: Path) -> list[str]:
    table = json.loads(settings.read_text())["hooks"]
    return [h["command"] for groups in table.values() for g in groups for h in g["hooks"]]


# -- Claude Code ------------------------------------------------------------------------------


def claude(env: dict[str, str], repo: Path, prompt: str) -> str:
    return cli(
        env, repo, "claude", "-p", prompt, "--model", STUB_MODEL["claude"],
        "--dangerously-skip-permissions",
    )  # fmt: skip


def test_claude_request_carries_the_synced_rules_and_runs_the_synced_command(
    env_for: Callable[..., dict[str, str]],
    git_repo: Path,
    tmp_path: Path,
    stub: stub_server.StubServer,
) -> None:
    env = env_for("claude")
    project(git_repo, "claude", tmp_path / "hooks.jsonl")
    (git_repo / "CLAUDE.md").write_text(OWN_CLAUDE_MD)
    synced(env, git_repo)
    assert (git_repo / "CLAUDE.md").read_text().startswith(OWN_CLAUDE_MD)  # the person's part

    claude(env, git_repo, "/review main today")
    [agent, *_] = carrying(stub, RULE) or [[]]
    assert any(RULE in t for t in agent), "no request carried .claude/rules/branches.md"
    assert any(PERSONS in t for t in agent)  # AGENTS.md, through CLAUDE.md's import
    assert any("WOMBAT-OWN" in t for t in agent)
    # the command's prompt as Claude Code expanded it: $1 is the first word
    assert any("Review QUOKKA-main now: main today." in t for t in agent)

    (git_repo / ".claude" / "commands" / "review.md").write_text("edited by hand\n")
    drift = ecc(env, git_repo, "sync", "--check")
    assert drift.returncode != 0 and ".claude/commands/review.md" in drift.stdout + drift.stderr
    ok(env, git_repo, "sync", "--force")

    (git_repo / "rules" / "branches.md").unlink()
    ok(env, git_repo, "sync")
    assert not (git_repo / ".claude" / "rules").exists()
    assert (git_repo / ".claude" / "commands" / "review.md").exists()
    assert (git_repo / "CLAUDE.md").read_text().startswith(OWN_CLAUDE_MD)


def test_claude_runs_each_synced_hook_beside_eccs_risk_hook(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    env = with_ecc_on_path(env_for("claude"))
    log = tmp_path / "hooks.jsonl"
    project(git_repo, "claude", log)
    ok(env, git_repo, "hooks", "install", "--harness", "claude", "--project")
    synced(env, git_repo)
    commands = hook_commands(git_repo / ".claude" / "settings.json")
    assert any("hook --harness claude" in c for c in commands)  # ecc's risk hook stayed
    assert sum(c.endswith(" # ecc-sync") for c in commands) == len(EVENTS)

    claude(env, git_repo, "make out.txt")
    seen = ran(log)
    assert set(seen) == set(EVENTS)
    assert seen["pre_tool"]["hook_event_name"] == "PreToolUse"
    assert seen["post_tool"]["tool_name"] == "Bash"
    assert "echo hello" in json.dumps(seen["post_tool"]["tool_input"])
    assert seen["prompt_submit"]["prompt"] == "make out.txt"
    assert (git_repo / "out.txt").exists()


# -- Gemini CLI -------------------------------------------------------------------------------


def gemini(env: dict[str, str], repo: Path, prompt: str, *flags: str) -> str:
    return cli(
        env, repo, "gemini", f"--model={STUB_MODEL['gemini']}", "--approval-mode=yolo",
        "--output-format=json", *flags, f"--prompt={prompt}",
    )  # fmt: skip


def trust_folder(env: dict[str, str], folder: Path) -> None:
    """What a person does when Gemini asks whether to trust the folder."""
    trusted = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(folder): "TRUST_FOLDER"}))


def test_gemini_loads_gemini_md_and_runs_the_synced_command(
    env_for: Callable[..., dict[str, str]],
    git_repo: Path,
    tmp_path: Path,
    stub: stub_server.StubServer,
) -> None:
    env = env_for("gemini")
    project(git_repo, "gemini", tmp_path / "hooks.jsonl")
    synced(env, git_repo)
    # as ecc's own sessions run it: --skip-trust still reads GEMINI.md (not the settings)
    gemini(env, git_repo, "say hi", "--skip-trust")
    assert carrying(stub, RULE) and carrying(stub, PERSONS)
    stub.requests.clear()
    trust_folder(env, git_repo)

    gemini(env, git_repo, "/review main today")
    [agent, *_] = carrying(stub, RULE) or [[]]
    assert any(RULE in t for t in agent), "no request carried GEMINI.md's rules"
    assert any(PERSONS in t for t in agent)  # AGENTS.md, through GEMINI.md's import
    # the TOML command's prompt: {{args}} for $ARGUMENTS, $1 explained next to the arguments
    prompt = next(t for t in agent if "Review QUOKKA-" in t)
    assert "Review QUOKKA-$1 now: main today." in prompt
    assert "$1 stands for the first word" in prompt and "The arguments: main today" in prompt

    (git_repo / "rules" / "branches.md").unlink()
    ok(env, git_repo, "sync")
    assert RULE not in (git_repo / "GEMINI.md").read_text()
    assert (git_repo / ".gemini" / "commands" / "review.toml").exists()


def test_gemini_runs_each_synced_hook_beside_eccs_risk_hook(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    env = with_ecc_on_path(env_for("gemini"))
    log = tmp_path / "hooks.jsonl"
    project(git_repo, "gemini", log)
    ok(env, git_repo, "hooks", "install", "--harness", "gemini", "--project")
    synced(env, git_repo)
    commands = hook_commands(git_repo / ".gemini" / "settings.json")
    assert any("hook --harness gemini" in c for c in commands)  # ecc's risk hook stayed
    assert sum(c.endswith(" # ecc-sync") for c in commands) == len(EVENTS)
    trust_folder(env, git_repo)

    gemini(env, git_repo, "make out.txt")
    seen = ran(log)
    assert set(seen) == set(EVENTS)
    assert seen["pre_tool"]["hook_event_name"] == "BeforeTool"
    assert seen["post_tool"]["tool_name"] == "run_shell_command"
    assert "echo hello" in json.dumps(seen["post_tool"]["tool_input"])
    assert (git_repo / "out.txt").exists()


# -- codex ------------------------------------------------------------------------------------


def test_codex_prompt_input_carries_agents_md_with_the_synced_rules(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    env = env_for("codex")
    project(git_repo, "codex", tmp_path / "hooks.jsonl")
    synced(env, git_repo)
    prompt = cli(env, git_repo, "codex", "debug", "prompt-input")
    assert RULE in prompt and PERSONS in prompt  # AGENTS.md: the person's part and ecc's
    assert "/review <branch> <when>" in prompt and "QUOKKA-DESC" in prompt  # as an instruction

    (git_repo / "rules" / "branches.md").unlink()
    ok(env, git_repo, "sync")
    prompt = cli(env, git_repo, "codex", "debug", "prompt-input")
    assert RULE not in prompt and PERSONS in prompt and "QUOKKA-DESC" in prompt


def test_codex_runs_each_synced_hook_beside_eccs_risk_hook(
    env_for: Callable[..., dict[str, str]], git_repo: Path, tmp_path: Path
) -> None:
    """In a trusted project; ``--dangerously-bypass-hook-trust`` stands in for trusting each
    new hook in codex's ``/hooks``, which codex asks of every hook a sync writes."""
    env = with_ecc_on_path(env_for("codex"))
    log = tmp_path / "hooks.jsonl"
    project(git_repo, "codex", log)
    ok(env, git_repo, "hooks", "install", "--harness", "codex", "--project")
    synced(env, git_repo)
    commands = hook_commands(git_repo / ".codex" / "hooks.json")
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
    # nothing for opencode.json: OpenCode reads AGENTS.md and .opencode/ by itself
    assert not (git_repo / "opencode.json").exists()

    cli(
        env, git_repo, "opencode", "run", "--format=json", f"--dir={git_repo}",
        f"--model={STUB_MODEL['opencode']}", "--command", "review", "--", "main", "today",
    )  # fmt: skip
    # the agent's requests (not the title's): AGENTS.md with the rules, and the command's
    # prompt as OpenCode substitutes it (the last $N takes the rest of the words)
    agent = carrying(stub, RULE)
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
