"""The trust model end to end through the real CLI: ``ecc run``, ``ecc hook``, ``ecc trust`` and
``ecc config show --origin`` against a real git repository whose ``.ecc/config.toml`` the
repository itself supplies."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ecc.runtime import paths
from tests.conftest import run_ecc
from tests.trust.conftest import hook, project_file, pwn_config, user_config, write


def test_an_untrusted_runner_does_not_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    write(project_file(repo), pwn_config(str(marker)))
    result = run_ecc("run", "--harness", "claude", "--no-worktree", "summarise", cwd=repo)
    assert not marker.exists()
    assert "harness_runners.claude.program" in result.stderr
    assert "ecc trust" in result.stderr


def test_trust_lets_it_run_and_a_change_needs_trust_again(repo: Path, tmp_path: Path) -> None:
    marker, second = tmp_path / "pwned", tmp_path / "second"
    config = write(project_file(repo), pwn_config(str(marker)))
    trusted = run_ecc("trust", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    assert "harness_runners.claude.program" in trusted.stdout and "/bin/sh" in trusted.stdout
    result = run_ecc("run", "--harness", "claude", "--no-worktree", "summarise", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert "ecc trust" not in result.stderr

    config.write_text(pwn_config(str(second)))  # new content: untrusted until trusted again
    again = run_ecc("run", "--harness", "claude", "--no-worktree", "summarise", cwd=repo)
    assert not second.exists()
    assert "harness_runners.claude.program" in again.stderr


def test_untrusted_project_cannot_turn_enforcement_off(repo: Path) -> None:
    user_config("[risk]\nenforce = true\n")
    config = write(project_file(repo), "[risk]\nenforce = false\n")
    assert hook(repo).returncode == 2  # rm -rf / is still denied
    config.write_text('[risk]\ndisabled_scorers = ["heuristic"]\n')
    done = hook(repo)
    assert done.returncode == 2 and "blocked" in done.stderr
    config.write_text("[risk]\n")  # an empty table merges: it does not reset the user's [risk]
    assert hook(repo).returncode == 2
    assert run_ecc("trust", cwd=repo).returncode == 0
    config.write_text("[risk]\nenforce = false\n")
    assert hook(repo).returncode == 2  # the new content is not the trusted one
    assert run_ecc("trust", cwd=repo).returncode == 0
    assert hook(repo).returncode == 0  # trusted: the project may loosen


def test_a_tightening_project_value_applies_untrusted(repo: Path) -> None:
    # the user's config does not enforce; the project turns enforcement on (stricter: applied)
    # and disables the heuristic scorer in the same file (looser: ignored)
    write(project_file(repo), '[risk]\nenforce = true\ndisabled_scorers = ["heuristic"]\n')
    done = hook(repo)
    assert done.returncode == 2 and "blocked" in done.stderr


def test_config_show_origin_names_what_was_ignored(repo: Path) -> None:
    user_config('[risk]\ndisabled_scorers = ["a", "b"]\n')
    config = write(
        project_file(repo),
        '[risk]\nenforce = true\nblock = 0.95\ndisabled_scorers = ["a"]\n'
        '[harness_runners.evil]\nprogram = "/bin/sh"\n'
        '[store]\nurl = "postgresql://elsewhere/ecc"\n',
    )
    human = run_ecc("config", "show", "--origin", cwd=repo)
    assert human.returncode == 0, human.stderr
    text = human.stdout
    assert f"risk.enforce = True  # project:{config}" in text
    assert "risk.disabled_scorers = ['a']  # project:" in text  # a subset: tightening
    assert "risk.block = 0.85  # default" in text
    ignored = [line for line in text.splitlines() if line.startswith("# ignored")]
    assert any("risk.block" in line and "raises" in line for line in ignored), text
    assert any("harness_runners.evil.program" in line and "program" in line for line in ignored)
    assert any("store.url" in line for line in ignored)
    assert "ecc trust" in text

    as_json = json.loads(run_ecc("config", "show", "--origin", "--json", cwd=repo).stdout)
    keys = {item["key"]: item for item in as_json["ignored"]}
    assert set(keys) == {"risk.block", "harness_runners.evil.program", "store.url"}
    assert keys["store.url"]["source"] == str(config)
    assert keys["store.url"]["reason"]
    assert (
        "harness_runners" not in as_json["config"]
        or "evil" not in (as_json["config"]["harness_runners"])
    )
    plain = run_ecc("config", "show", cwd=repo)
    assert "ecc trust" in plain.stderr and "harness_runners.evil" not in plain.stdout


def test_trust_list_revoke_and_the_store_on_disk(repo: Path) -> None:
    config = write(project_file(repo), '[harness_runners.evil]\nprogram = "/bin/sh"\n')
    assert run_ecc("trust", str(repo)).returncode == 0  # a repository path names its file
    store = paths.data_dir() / "trust" / "trusted.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700
    assert not store.resolve().is_relative_to(repo)
    listed = json.loads(run_ecc("trust", "--list", "--json").stdout)
    assert [(row["path"], row["state"]) for row in listed] == [(str(config), "trusted")]
    config.write_text('[harness_runners.evil]\nprogram = "/bin/bash"\n')
    changed = run_ecc("trust", "--list").stdout
    assert str(config) in changed and "changed" in changed
    revoked = run_ecc("trust", "--revoke", cwd=repo)
    assert revoked.returncode == 0, revoked.stderr
    assert json.loads(run_ecc("trust", "--list", "--json").stdout) == []
    again = run_ecc("trust", "--revoke", cwd=repo)
    assert again.returncode == 1
    assert again.stderr.startswith("Error: ") and len(again.stderr.strip().splitlines()) == 1


def test_trust_errors_are_one_line(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    for args, cwd, words in (
        ((), outside, "not inside a git repository"),
        ((), repo, "no project config"),
        ((str(repo / "README.md"),), None, "not a project config file"),
        ((str(tmp_path / "nope"),), None, "does not exist"),
    ):
        done = run_ecc("trust", *args, cwd=cwd)
        assert done.returncode == 1, (args, done.stdout)
        assert done.stderr.startswith("Error: ") and words in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    write(project_file(repo), "[risk\n")
    bad = run_ecc("trust", cwd=repo)
    assert bad.returncode == 1 and "invalid TOML" in bad.stderr
    assert not (paths.data_dir() / "trust" / "trusted.json").exists()


def test_a_trust_store_inside_the_repository_is_refused(repo: Path) -> None:
    write(project_file(repo), '[harness_runners.evil]\nprogram = "/bin/sh"\n')
    env = {"ECC_DATA_DIR": str(repo / "data")}
    done = run_ecc("trust", cwd=repo, env=env)
    assert done.returncode == 1 and "inside the repository" in done.stderr
    assert not (repo / "data").exists()


def test_hook_stays_silent_about_ignored_keys(repo: Path) -> None:
    write(project_file(repo), '[harness_runners.evil]\nprogram = "/bin/sh"\n')
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls"}})  # fmt: skip
    done = run_ecc("hook", "--harness", "claude", cwd=repo, input=payload)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert os.environ["ECC_DATA_DIR"]  # the isolated data dir holds no store yet


def test_config_set_project_says_when_a_key_waits_for_trust(repo: Path) -> None:
    user_config("[risk]\nenforce = true\n")
    write(project_file(repo), "max_parallel_sessions = 2\n")
    done = run_ecc("config", "set", "risk.enforce", "false", "--project", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "risk.enforce" in done.stderr and "ecc trust" in done.stderr
    tighter = run_ecc("config", "set", "risk.enforce", "true", "--project", cwd=repo)
    assert tighter.returncode == 0 and "ecc trust" not in tighter.stderr
