"""The hook a managed session applies itself (``ecc hook --managed``) against an installed one.

A session's worktree is built from HEAD, so the policy the managed hook applies is that of the
directory ``ecc run`` was invoked in (``ECC_POLICY_DIR``), uncommitted edits included; and a
hook the user installed steps aside inside such a session (``ECC_SESSION_HOOK=1``), so each call
is decided and recorded once.
"""

from __future__ import annotations

from pathlib import Path

from tests.hooks.test_hook_command import claude_pre, hook, make_session, rows


def project_with_policy(root: Path) -> Path:
    """A git checkout whose uncommitted ``.ecc/config.toml`` turns enforcement on."""
    (root / ".git").mkdir(parents=True)  # what makes it a project root
    (root / ".ecc").mkdir()
    (root / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    return root


def test_the_managed_hook_reads_the_policy_where_ecc_run_was_invoked(tmp_path: Path) -> None:
    invoked = project_with_policy(tmp_path / "checkout")
    worktree = tmp_path / "worktree"  # built from HEAD: the uncommitted policy is not in it
    (worktree / ".git").mkdir(parents=True)
    session = make_session()
    env = {"ECC_SESSION_ID": session, "ECC_POLICY_DIR": str(invoked), "ECC_SESSION_HOOK": "1"}
    payload = claude_pre("rm -rf .")
    denied = hook("claude", payload, env, "--managed", cwd=worktree)
    assert denied.returncode == 2, denied.stderr
    assert "blocked" in denied.stderr
    [row] = rows(session)
    assert (row["action"], row["decision"]) == ("block", "deny")


def test_without_the_policy_dir_the_managed_hook_denies(tmp_path: Path) -> None:
    """The worktree's own policy is the agent's to edit: a managed hook that cannot find the
    invoking checkout's policy never falls back to it."""
    worktree = tmp_path / "worktree"
    (worktree / ".git").mkdir(parents=True)
    env = {"ECC_SESSION_ID": make_session()}
    denied = hook("claude", claude_pre("ls"), env, "--managed", cwd=worktree)
    assert denied.returncode == 2
    assert "ECC_POLICY_DIR unset" in denied.stderr


def test_an_installed_hook_steps_aside_in_a_session_that_applies_its_own(tmp_path: Path) -> None:
    invoked = project_with_policy(tmp_path / "checkout")
    session = make_session()
    env = {"ECC_SESSION_ID": session, "ECC_POLICY_DIR": str(invoked), "ECC_SESSION_HOOK": "1"}
    done = hook("claude", claude_pre("rm -rf ."), env, cwd=invoked)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert rows(session) == []  # the session's own hook records the call, once


def test_an_installed_hook_outside_such_a_session_still_decides(tmp_path: Path) -> None:
    invoked = project_with_policy(tmp_path / "checkout")
    done = hook("claude", claude_pre("rm -rf ."), {"ECC_SESSION_ID": make_session()}, cwd=invoked)
    assert done.returncode == 2
