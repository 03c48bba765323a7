"""Shell completion of session ids (from the store), harness names and profile names."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import run_ecc
from tests.conventions.conftest import wait_finished


def complete(*words: str, cwd: Path | None = None) -> list[str]:
    """What bash completion offers after ``ecc WORDS`` (the last word is the one completed)."""
    line = ["ecc", *words]
    result = run_ecc(
        cwd=cwd,
        env={
            "_ECC_COMPLETE": "bash_complete",
            "COMP_WORDS": " ".join(line),
            "COMP_CWORD": str(len(line) - 1),
        },
    )
    assert result.returncode == 0, result.stderr
    return [row.split(",", 1)[1] for row in result.stdout.splitlines() if "," in row]


def test_session_ids_complete(git_repo: Path):
    started = run_ecc("start", "--no-worktree", "--harness", "shell", "true", cwd=git_repo)
    session_id = started.stdout.strip()
    wait_finished(session_id, git_repo)
    assert session_id in complete("status", "", cwd=git_repo)
    assert complete("logs", session_id[:4], cwd=git_repo) == [session_id]
    assert session_id in complete("worktree", "diff", "", cwd=git_repo)
    assert complete("stop", "zz", cwd=git_repo) == []


def test_harness_and_profile_names_complete(git_repo: Path):
    config = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[agent_profiles.careful]\nmodel = "x"\n[agent_profiles.quick]\n')
    harnesses = complete("run", "--harness", "", cwd=git_repo)
    assert {"shell", "claude", "codex"} <= set(harnesses)
    assert complete("run", "--harness", "sh", cwd=git_repo) == ["shell"]
    assert set(complete("start", "--profile", "", cwd=git_repo)) == {"careful", "quick"}
    assert "claude" in complete("hooks", "install", "--harness", "cl", cwd=git_repo)
