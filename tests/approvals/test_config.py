"""``risk.approval_timeout`` and ``risk.approval_timeout_decision``: validated, guarded against
an untrusted project, and written into the harnesses' hook timeouts by ``ecc hooks install``
(longer than the hold, or the harness would decide first)."""

from __future__ import annotations

import json
from pathlib import Path

from ecc.runtime.config import model as config
from tests.conftest import run_ecc
from tests.trust.conftest import project_file, user_config, write


def test_defaults_and_validation() -> None:
    risk = config.Config().risk
    assert risk.approval_timeout == 600 and risk.approval_timeout_decision == "deny"
    bad = run_ecc("config", "get", "risk", env={"ECC__RISK__APPROVAL_TIMEOUT": "0"})
    assert bad.returncode == 1 and "approval_timeout" in bad.stderr
    bad = run_ecc("config", "get", "risk", env={"ECC__RISK__APPROVAL_TIMEOUT_DECISION": "ask"})
    assert bad.returncode == 1 and "approval_timeout_decision" in bad.stderr


def test_an_untrusted_project_may_shorten_the_hold_but_never_allow_on_timeout(
    git_repo: Path,
) -> None:
    write(
        project_file(git_repo),
        '[risk]\napproval_timeout = 60\napproval_timeout_decision = "allow"\n',
    )
    loaded = config.load(cwd=git_repo, environ={})
    assert loaded.config.risk.approval_timeout == 60
    assert loaded.config.risk.approval_timeout_decision == "deny"
    assert {item.key for item in loaded.ignored} == {"risk.approval_timeout_decision"}

    write(project_file(git_repo), "[risk]\napproval_timeout = 6000\n")
    loaded = config.load(cwd=git_repo, environ={})
    assert loaded.config.risk.approval_timeout == 600
    assert {item.key for item in loaded.ignored} == {"risk.approval_timeout"}


def test_a_shorter_hold_is_not_stricter_when_the_user_allows_on_timeout(git_repo: Path) -> None:
    user_config('[risk]\napproval_timeout_decision = "allow"\n')
    write(project_file(git_repo), "[risk]\napproval_timeout = 5\n")
    loaded = config.load(cwd=git_repo, environ={})
    assert loaded.config.risk.approval_timeout == 600
    write(project_file(git_repo), '[risk]\napproval_timeout_decision = "deny"\n')
    assert config.load(cwd=git_repo, environ={}).config.risk.approval_timeout_decision == "deny"


def test_hook_timeouts_outlast_the_hold(git_repo: Path) -> None:
    env = {"ECC__RISK__APPROVAL_TIMEOUT": "120"}
    for harness in ("claude", "codex", "gemini", "opencode"):
        done = run_ecc("hooks", "install", "--harness", harness, cwd=git_repo, env=env)
        assert done.returncode == 0, done.stderr

    def timeout_of(relative: str, event: str) -> int:
        data = json.loads((git_repo / relative).read_text())
        (group,) = data["hooks"][event]
        return int(group["hooks"][0]["timeout"])

    assert timeout_of(".claude/settings.json", "PreToolUse") == 150  # seconds
    assert timeout_of(".codex/hooks.json", "PreToolUse") == 150  # seconds
    assert timeout_of(".gemini/settings.json", "BeforeTool") == 150_000  # milliseconds
    module = (git_repo / ".opencode" / "ecc-hooks.js").read_text()
    assert "TIMEOUT_MS = 150000;" in module and "30000" not in module

    done = run_ecc("hooks", "install", "--harness", "claude", cwd=git_repo)  # default 600 s
    assert done.returncode == 0 and "updated" in done.stdout
    assert timeout_of(".claude/settings.json", "PreToolUse") == 630
