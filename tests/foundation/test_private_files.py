"""ecc's own directories are 0700 and its private files 0600, whatever the umask.

The config (it may name a store URL with a password), the session store (agents' output), the
worktrees (the user's code) and the logs are nobody else's business. Every test runs the real
CLI under ``umask 022``, the common default that would leave them 0755/0644.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.conftest import ECC


def _ecc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*ECC, *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
        umask=0o022,
    )
    assert result.returncode == 0, result.stderr
    return result


def _mode(path: Path) -> str:
    return oct(stat.S_IMODE(os.lstat(path).st_mode))


def _modes(*paths: Path) -> dict[str, str]:
    return {path.name: _mode(path) for path in paths}


def _env_dir(name: str) -> Path:
    return Path(os.environ[name])


def test_config_set_user_creates_a_private_dir_and_file(tmp_path: Path) -> None:
    config_dir = _env_dir("ECC_CONFIG_DIR")
    assert not config_dir.exists()
    _ecc("config", "set", "default_harness", "shell", "--user", cwd=tmp_path)
    config = config_dir / "config.toml"
    assert _modes(config_dir, config) == {"ecc": "0o700", "config.toml": "0o600"}
    # Every level ecc had to create is private too (here ~/.config did not exist).
    assert _mode(config_dir.parent) == "0o700"
    assert 'default_harness = "shell"' in config.read_text()


def test_config_set_user_tightens_a_loose_config(tmp_path: Path) -> None:
    config_dir = _env_dir("ECC_CONFIG_DIR")
    config_dir.mkdir(parents=True, mode=0o755)
    config = config_dir / "config.toml"
    config.write_text("token_budget = 5\n")
    config_dir.chmod(0o755)
    config.chmod(0o644)
    _ecc("config", "set", "default_harness", "shell", "--user", cwd=tmp_path)
    assert _modes(config_dir, config) == {"ecc": "0o700", "config.toml": "0o600"}
    assert config.read_text().splitlines() == ["token_budget = 5", 'default_harness = "shell"']
    assert [p.name for p in config_dir.iterdir()] == ["config.toml"]  # no temp file left


def test_config_set_project_keeps_the_project_file_mode(git_repo: Path) -> None:
    # <repo>/.ecc/config.toml is shared with the team (committed), so it keeps its mode.
    project = git_repo / ".ecc" / "config.toml"
    project.parent.mkdir()
    project.write_text("token_budget = 5\n")
    project.chmod(0o640)
    _ecc("config", "set", "default_harness", "shell", "--project", cwd=git_repo)
    assert _mode(project) == "0o640"
    assert 'default_harness = "shell"' in project.read_text()


def test_run_creates_private_data_worktrees_and_store(git_repo: Path) -> None:
    data, state = _env_dir("ECC_DATA_DIR"), _env_dir("ECC_STATE_DIR")
    assert not data.exists() and not state.exists()
    _ecc("run", "--harness", "shell", "echo hello", cwd=git_repo)
    worktrees = data / "worktrees"
    (repo_dir,) = worktrees.iterdir()
    assert _modes(data, worktrees, repo_dir) == {
        "ecc": "0o700",
        "worktrees": "0o700",
        repo_dir.name: "0o700",
    }
    assert _modes(data.parent, state.parent, state, state / "logs") == {
        "share": "0o700",
        "state": "0o700",
        "ecc": "0o700",
        "logs": "0o700",
    }
    private_files = [state / "ecc.db", *sorted((state / "logs").iterdir())]
    private_files += [p for p in (state / "ecc.db-wal", state / "ecc.db-shm") if p.exists()]
    assert {p.name: _mode(p) for p in private_files} == {p.name: "0o600" for p in private_files}


def test_run_tightens_loose_data_and_worktree_dirs(git_repo: Path) -> None:
    data = _env_dir("ECC_DATA_DIR")
    worktrees = data / "worktrees"
    worktrees.mkdir(parents=True)
    data.chmod(0o755)
    worktrees.chmod(0o755)
    _ecc("run", "--harness", "shell", "echo hello", cwd=git_repo)
    assert _modes(data, worktrees) == {"ecc": "0o700", "worktrees": "0o700"}


def test_memory_commands_create_a_private_cache(git_repo: Path) -> None:
    # The cache holds the search index (memory bodies) and the validated config layers.
    cache = _env_dir("ECC_CACHE_DIR")
    subprocess.run(
        [*ECC, "memory", "save", "--title", "Cache probe", "--stdin"],
        cwd=git_repo,
        input="body text",
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
        umask=0o022,
        check=True,
    )
    _ecc("memory", "search", "probe", cwd=git_repo)
    assert _modes(cache.parent, cache) == {".cache": "0o700", "ecc": "0o700"}
    subdirs = [p for p in cache.iterdir() if p.is_dir()]
    assert "memory-index" in {p.name for p in subdirs}
    assert {p.name: _mode(p) for p in subdirs} == {p.name: "0o700" for p in subdirs}
    indexes = list((cache / "memory-index").glob("*.sqlite3"))
    assert indexes and {_mode(p) for p in indexes} == {"0o600"}
