"""``ecc sync`` with the four first-party adapters together: each harness reads each rule once.

Codex and OpenCode read ``AGENTS.md``; Claude Code and Gemini CLI read it through an
``@AGENTS.md`` import. The rules are rendered once, into ecc's section of ``AGENTS.md``, so no
harness gets a rule twice however many of them a project syncs.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_ecc


def test_four_harnesses_share_one_rendering_of_the_rules(git_repo: Path) -> None:
    (git_repo / "AGENTS.md").write_text("# Project\n\nBe kind to the tests.\n")
    (git_repo / "rules").mkdir()
    rule = "---\ndescription: House style\n---\nUse QUOKKA.\n"
    (git_repo / "rules" / "style.md").write_text(rule)
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text(
        '[sync]\nharnesses = ["claude", "codex", "gemini", "opencode"]\n'
    )
    done = run_ecc("sync", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    agents = (git_repo / "AGENTS.md").read_text()
    assert agents.count("Use QUOKKA.") == 1 and agents.startswith("# Project\n")
    for context in ("CLAUDE.md", "GEMINI.md"):
        text = (git_repo / context).read_text()
        assert "@AGENTS.md" in text.splitlines() and "QUOKKA" not in text
    assert not (git_repo / ".claude" / "rules").exists()
    assert run_ecc("sync", "--check", cwd=git_repo).returncode == 0


def test_a_sync_with_nothing_to_do_says_only_that(git_repo: Path) -> None:
    (git_repo / "AGENTS.md").write_text("# Project\n")
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text('[sync]\nharnesses = ["claude", "gemini"]\n')
    first = run_ecc("sync", cwd=git_repo)
    assert "gemini: rules translated" in first.stdout  # what was written, and how
    again = run_ecc("sync", cwd=git_repo)
    assert again.stdout == "up to date: nothing to write\n"
    assert run_ecc("sync", "--check", cwd=git_repo).stdout == "in sync: claude, gemini\n"
    assert "gemini: rules translated" in run_ecc("sync", "-v", cwd=git_repo).stdout


def test_installing_the_risk_hook_after_a_sync_is_no_drift(git_repo: Path, tmp_path: Path) -> None:
    """``ecc hooks install`` adds ecc's risk hook after the synced hook in the same event's
    list; the next merge keeps every entry in its place, so the file is still in sync."""
    user = tmp_path / "user.toml"  # the user's own hooks: trusted
    user.write_text('[[sync.hooks]]\nevent = "pre_tool"\ncommand = "./check.sh"\n')
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text('[sync]\nharnesses = ["claude", "codex"]\n')
    env = {"ECC_CONFIG": str(user)}
    assert run_ecc("sync", cwd=git_repo, env=env).returncode == 0
    for harness, scope in (("claude", "--project"), ("codex", "--project")):
        done = run_ecc("hooks", "install", "--harness", harness, scope, cwd=git_repo, env=env)
        assert done.returncode == 0, done.stderr
    check = run_ecc("sync", "--check", cwd=git_repo, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    settings = (git_repo / ".claude" / "settings.json").read_text()
    assert settings.index("./check.sh") < settings.index("ecc hook --harness claude")
