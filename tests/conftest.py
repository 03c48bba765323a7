"""Shared fixtures: every test runs with its own HOME, config, state, data and cache dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.runtime.config import model as ecc_config
from ecc.runtime.plugins import loader as ecc_plugins
from tests.servers import postgres_server, redis_server  # noqa: F401 (shared fixtures)

REPO = Path(__file__).resolve().parent.parent
ECC = [sys.executable, "-m", "ecc"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for name, sub in {
        "HOME": "home",
        "ECC_CONFIG_DIR": "home/.config/ecc",
        "ECC_STATE_DIR": "home/.local/state/ecc",
        "ECC_DATA_DIR": "home/.local/share/ecc",
        "ECC_CACHE_DIR": "home/.cache/ecc",
        "XDG_CONFIG_HOME": "home/.config",
        "XDG_STATE_HOME": "home/.local/state",
        "XDG_DATA_HOME": "home/.local/share",
        "XDG_CACHE_HOME": "home/.cache",
    }.items():
        monkeypatch.setenv(name, str(tmp_path / sub))
    for name in list(os.environ):
        # OTEL_*: no test session is sent to a collector the developer's environment names
        if name.startswith(("ECC__", "OTEL_")) or name in {
            "ECC_CONFIG",
            "ECC_PLUGINS",
            "ECC_SESSION_ID",
            "ECC_DRY_RUN",
            "ECC_MEMORY_HARNESS",
            "ECC_MEMORY_PROJECT_ROOT",
            "ECC_MEMORY_USER_ROOT",
            "ECC_MEMORY_ALLOW_USER_SCOPE",
        }:
            monkeypatch.delenv(name, raising=False)
    for name, value in {
        "GIT_AUTHOR_NAME": "ecc tests",
        "GIT_AUTHOR_EMAIL": "tests@ecc.invalid",
        "GIT_COMMITTER_NAME": "ecc tests",
        "GIT_COMMITTER_EMAIL": "tests@ecc.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(name, value)
    ecc_config.set_cli_overrides(())
    ecc_config.reset()
    ecc_plugins.reset()
    yield home
    ecc_config.set_cli_overrides(())
    ecc_config.reset()
    ecc_plugins.reset()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A real git repository with one commit on branch main."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def run_ecc(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``ecc`` CLI in a subprocess (``python -m ecc``)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [*ECC, *args],
        cwd=cwd,
        input=input,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def ecc_cli():
    return run_ecc
