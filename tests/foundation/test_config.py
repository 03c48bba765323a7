"""Layered configuration: merge order, origins, validation errors and ``config set``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from ecc.contract.errors import ConfigError
from ecc.runtime import paths
from ecc.runtime.config import model as config
from ecc.runtime.config import trust
from tests.conftest import run_ecc


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_layers_merge_tables_and_replace_lists(git_repo: Path, monkeypatch, tmp_path: Path):
    write(
        paths.user_config_file(),
        "max_parallel_worktrees = 3\nauto_create_worktrees = false\n"
        '[risk]\nreview = 0.2\ndisabled_scorers = ["a", "b"]\n'
        '[agent_profiles.base]\nmodel = "sonnet"\nallowed_tools = ["Read"]\n',
    )
    project = write(
        git_repo / ".ecc" / "config.toml",
        'max_parallel_worktrees = 2\n[risk]\ndisabled_scorers = ["c"]\n'
        '[agent_profiles.base]\npermission_mode = "plan"\n',
    )
    trust.record(project)  # approved: its looser disabled_scorers applies too
    explicit = write(tmp_path / "explicit.toml", "[risk]\nblock = 0.9\n")
    env = {"ECC_CONFIG": str(explicit), "ECC__RISK__ENFORCE": "true", "ECC__TOKEN_BUDGET": "1000"}
    loaded = config.load(cwd=git_repo, environ=env, overrides=["worktree_branch_prefix=agents"])
    cfg = loaded.config
    assert cfg.max_parallel_worktrees == 2  # project beats user
    assert cfg.auto_create_worktrees is False  # user value kept where project is silent
    assert cfg.risk.review == 0.2 and cfg.risk.block == 0.9 and cfg.risk.enforce is True
    assert cfg.risk.disabled_scorers == ["c"]  # lists replace, never append
    assert cfg.agent_profiles["base"].model == "sonnet"  # tables merge key by key
    assert cfg.agent_profiles["base"].permission_mode == "plan"
    assert cfg.token_budget == 1000
    assert cfg.worktree_branch_prefix == "agents"
    assert loaded.origin_of("max_parallel_worktrees") == f"project:{git_repo / '.ecc/config.toml'}"
    assert loaded.origin_of("auto_create_worktrees").startswith("user:")
    assert loaded.origin_of("risk.block") == f"ECC_CONFIG:{explicit}"
    assert loaded.origin_of("risk.enforce").startswith("env:")
    assert loaded.origin_of("worktree_branch_prefix") == "flag:command line"
    assert loaded.origin_of("risk.require_confirmation") == "default"


def test_show_origin_from_the_cli(git_repo: Path):
    write(git_repo / ".ecc" / "config.toml", "max_parallel_worktrees = 2\n")
    result = run_ecc("config", "show", "--json", "--origin", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["config"]["max_parallel_worktrees"] == 2
    assert payload["origins"]["max_parallel_worktrees"].startswith("project:")
    assert payload["origins"]["heartbeat_interval_secs"] == "default"
    human = run_ecc("-c", "token_budget=5", "config", "show", "--origin", cwd=git_repo)
    assert "token_budget = 5  # flag:command line" in human.stdout


def test_bad_toml_names_the_file(git_repo: Path):
    bad = write(git_repo / ".ecc" / "config.toml", "max_parallel_worktrees = = 2\n")
    result = run_ecc("config", "show", cwd=git_repo)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: invalid TOML in ")
    assert str(bad) in result.stderr


def test_unknown_key_names_file_and_key(git_repo: Path):
    bad = write(git_repo / ".ecc" / "config.toml", "[risk]\nenforse = true\n")
    with pytest.raises(ConfigError) as info:
        config.load(cwd=git_repo, environ={})
    message = str(info.value)
    assert f"project:{bad}" in message and "risk.enforse: unknown key" in message


def test_wrong_type_names_key_and_expectation(git_repo: Path):
    write(paths.user_config_file(), 'max_parallel_worktrees = "many"\n')
    result = run_ecc("config", "get", "max_parallel_worktrees", cwd=git_repo)
    assert result.returncode == 1
    assert "max_parallel_worktrees" in result.stderr
    assert "valid integer" in result.stderr and "'many'" in result.stderr
    assert "user:" in result.stderr


def test_invalid_threshold_order_is_refused():
    with pytest.raises(ConfigError, match="review <= require_confirmation <= block"):
        config.load(environ={"ECC__RISK__REVIEW": "0.9"})


def test_missing_ecc_config_file_is_an_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="does not exist"):
        config.load(environ={"ECC_CONFIG": str(tmp_path / "nope.toml")})


def test_config_set_round_trips_and_keeps_other_keys(git_repo: Path):
    project_file = write(
        git_repo / ".ecc" / "config.toml",
        '# team defaults\ndefault_harness = "claude"\n[agent_profiles.review]\nmodel = "opus"\n',
    )
    result = run_ecc("config", "set", "risk.enforce", "true", "--project", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    data = tomllib.loads(project_file.read_text())
    assert data == {
        "default_harness": "claude",
        "agent_profiles": {"review": {"model": "opus"}},
        "risk": {"enforce": True},
    }
    got = run_ecc("config", "get", "risk.enforce", cwd=git_repo)
    assert got.stdout.strip() == "true"
    user = run_ecc("config", "set", "token_budget", "2500", "--user", cwd=git_repo)
    assert user.returncode == 0, user.stderr
    assert tomllib.loads(paths.user_config_file().read_text()) == {"token_budget": 2500}
    assert tomllib.loads(project_file.read_text())["risk"] == {"enforce": True}


def test_config_set_refuses_invalid_values_and_writes_nothing(git_repo: Path):
    project_file = write(git_repo / ".ecc" / "config.toml", 'default_harness = "claude"\n')
    before = project_file.read_bytes()
    result = run_ecc("config", "set", "max_parallel_worktrees", "zero", "--project", cwd=git_repo)
    assert result.returncode == 1 and "max_parallel_worktrees" in result.stderr
    unknown = run_ecc("config", "set", "no_such_key", "1", "--project", cwd=git_repo)
    assert unknown.returncode == 1 and "no_such_key: unknown key" in unknown.stderr
    assert project_file.read_bytes() == before
    no_scope = run_ecc("config", "set", "token_budget", "1", cwd=git_repo)
    assert no_scope.returncode == 2 and "--user or --project" in no_scope.stderr


def test_config_path_lists_layers(git_repo: Path):
    result = run_ecc("config", "path", "--json", cwd=git_repo)
    rows = json.loads(result.stdout)
    assert [row["layer"] for row in rows] == ["user", "project"]
    assert rows[1]["path"] == str(git_repo / ".ecc" / "config.toml")


def test_profile_inheritance_unions_lists_and_joins_prompts():
    cfg = config.Config.model_validate(
        {
            "agent_profiles": {
                "base": {
                    "model": "sonnet",
                    "allowed_tools": ["Read"],
                    "permission_mode": "plan",
                    "add_dirs": ["docs"],
                    "append_system_prompt": "Be careful.",
                },
                "reviewer": {
                    "inherits": "base",
                    "allowed_tools": ["Edit", "Read"],
                    "disallowed_tools": ["Bash"],
                    "token_budget": 1200,
                    "append_system_prompt": "Review thoroughly.",
                },
                "loop_a": {"inherits": "loop_b"},
                "loop_b": {"inherits": "loop_a"},
            }
        }
    )
    from ecc.runtime.config.profiles import agent_profile
    from ecc.runtime.config.view import ConfigView

    for given in (cfg, ConfigView(cfg.model_dump(mode="json"))):  # the model and the view
        resolved = agent_profile(given, "reviewer")
        assert resolved.model == "sonnet"
        assert resolved.allowed_tools == ["Read", "Edit"]
        assert resolved.disallowed_tools == ["Bash"]
        assert resolved.add_dirs == ["docs"]
        assert resolved.token_budget == 1200
        assert resolved.append_system_prompt == "Be careful.\n\nReview thoroughly."
        with pytest.raises(ConfigError, match="cycle: loop_a -> loop_b -> loop_a"):
            agent_profile(given, "loop_a")
        with pytest.raises(ConfigError, match="Unknown agent profile: nope"):
            agent_profile(given, "nope")
