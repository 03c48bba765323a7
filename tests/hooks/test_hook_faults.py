"""``ecc hook`` when its own configuration is broken, and on inputs too large to score.

A broken config must never weaken a decision: the fail-closed setting is read from the files
that still parse (and the last settings that loaded), and a call is denied when enforcement was
on and ``risk.fail_closed`` cannot be known. Inputs over ``risk.max_input_bytes`` get the
configured fail decision at once, without scoring. Every case drives the real ``ecc hook`` in a
subprocess with a Claude Code payload on stdin.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ecc.store.open import default_path, open_store
from tests.conftest import run_ecc
from tests.hooks.test_hook_command import claude_pre

HARNESS_TIMEOUT = 15  # well under the harness's own 30 s; the old scorer took 48 s at 1.6 MB


def user_config(text: str) -> Path:
    path = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project_config(repo: Path, text: str) -> Path:
    path = repo / ".ecc" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def hook(command: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60):
    payload = json.dumps(claude_pre(command))
    return run_ecc("hook", "--harness", "claude", cwd=cwd, input=payload, env=env, timeout=timeout)


def log_text() -> str:
    path = Path(os.environ["ECC_STATE_DIR"]) / "logs" / "hook.log"
    return path.read_text() if path.exists() else ""


def rows() -> list[dict]:
    with open_store(default_path()) as store:
        return store.list_tool_calls(None)


def assert_denied_for_config(done, why: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr  # one line
    assert "config" in done.stderr and why in done.stderr, done.stderr


# -- a config that does not load ---------------------------------------------------------------


def test_a_syntax_error_in_the_project_file_keeps_the_user_files_fail_closed(git_repo: Path):
    user_config("[risk]\nfail_closed = true\n")
    project_config(git_repo, "[risk\nenforce = false\n")
    done = hook("ls", git_repo)
    assert_denied_for_config(done, "fail_closed")
    assert "invalid TOML" in done.stderr and "user" in done.stderr
    assert "invalid TOML" in log_text()


def test_an_unknown_key_in_the_user_file_does_not_lose_its_fail_closed(git_repo: Path):
    user_config("[risk]\nfail_closed = true\nenforce = true\nblok = 0.9\n")
    done = hook("ls", git_repo)
    assert_denied_for_config(done, "fail_closed")
    assert "unknown key" in done.stderr and "risk.blok" in done.stderr


def test_fail_closed_in_the_environment_counts_when_a_file_is_broken(git_repo: Path):
    user_config("this is not toml\n")
    done = hook("ls", git_repo, {"ECC__RISK__FAIL_CLOSED": "true"})
    assert_denied_for_config(done, "fail_closed")


def test_fail_closed_is_read_from_the_broken_file_itself(git_repo: Path):
    user_config("[risk]\nenforce = true\nfail_closed = true   # strict\n\n[store\nurl = 1\n")
    assert_denied_for_config(hook("ls", git_repo), "fail_closed")


def test_the_last_settings_that_loaded_stand_in_for_a_file_that_no_longer_parses(
    git_repo: Path,
):
    path = user_config("[risk]\nenforce = true\nfail_closed = true\n")
    first = hook("ls", git_repo)
    assert (first.returncode, first.stderr) == (0, "")  # loaded fine: the settings are kept
    [kept] = list((Path(os.environ["ECC_STATE_DIR"]) / "failsafe").glob("*.json"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    path.write_text("\x00\x01 not a config at all {{{\n")  # nothing in it can be read
    done = hook("ls", git_repo)
    assert_denied_for_config(done, "last")


def test_enforcement_on_and_fail_closed_unknowable_denies(git_repo: Path):
    user_config("[risk]\nenforce = true\n")
    project_config(git_repo, "[risk]\nfail_closed = tru\n")  # a typo: the whole file is lost
    done = hook("ls", git_repo)
    assert_denied_for_config(done, "risk.enforce")


def test_a_broken_config_without_fail_closed_still_allows_and_logs_a_warning(git_repo: Path):
    user_config("[risk\n")
    done = hook("rm -rf /", git_repo)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    log = log_text()
    assert "config" in log and "invalid TOML" in log and "allowed" in log


def test_a_config_that_loads_again_replaces_the_kept_settings(git_repo: Path):
    path = user_config("[risk]\nenforce = true\nfail_closed = true\n")
    assert hook("ls", git_repo).returncode == 0
    path.write_text("[risk]\nenforce = false\n")  # deliberately relaxed, and valid
    assert hook("ls", git_repo).returncode == 0
    path.write_text("\x00 broken\n")
    done = hook("ls", git_repo)
    assert (done.returncode, done.stderr) == (0, "")


# -- inputs too large to score -----------------------------------------------------------------


def big_command(size: int, head: str = "echo ") -> str:
    return head + '"' + "A" * size + '"'


def test_an_input_over_the_limit_is_denied_at_once_under_fail_closed(git_repo: Path):
    env = {"ECC__RISK__ENFORCE": "true", "ECC__RISK__FAIL_CLOSED": "true"}
    done = hook(big_command(1_600_000), git_repo, env, timeout=HARNESS_TIMEOUT)
    assert done.returncode == 2
    assert "max_input_bytes" in done.stderr and "fail_closed" in done.stderr
    (row,) = rows()
    assert row["decision"] == "deny" and row["score"] is None


def test_an_input_over_the_limit_is_allowed_unscored_with_the_reason_recorded(git_repo: Path):
    done = hook(big_command(1_600_000), git_repo, {"ECC__RISK__ENFORCE": "true"}, HARNESS_TIMEOUT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    (row,) = rows()
    assert row["decision"] == "allow" and row["score"] is None and row["action"] is None
    assert any("max_input_bytes" in reason for reason in row["reasons"])


def test_an_input_under_the_limit_is_still_scored_in_time(git_repo: Path):
    command = big_command(400_000, "rm -rf / ; echo ")
    done = hook(command, git_repo, {"ECC__RISK__ENFORCE": "true"}, HARNESS_TIMEOUT)
    assert done.returncode == 2 and "blocked" in done.stderr
    assert rows()[0]["score"] == pytest.approx(1.0)


def test_the_size_limit_is_a_config_key(git_repo: Path):
    env = {"ECC__RISK__MAX_INPUT_BYTES": "2000", "ECC__RISK__FAIL_CLOSED": "true"}
    assert hook("ls", git_repo, env).returncode == 0
    done = hook(big_command(3000), git_repo, env)
    assert done.returncode == 2 and "max_input_bytes (2000)" in done.stderr
