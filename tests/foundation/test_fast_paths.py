"""The caches behind the hot paths change speed only, never results."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ecc.contract.errors import ConfigError
from ecc.runtime import paths
from ecc.runtime.config import model as config
from ecc.runtime.config import view as fastconfig
from ecc.runtime.plugins import loader as plugins
from tests.conftest import run_ecc
from tests.foundation.test_plugins import make_distribution


def test_view_matches_full_config_and_follows_edits(git_repo: Path):
    project = git_repo / ".ecc" / "config.toml"
    project.parent.mkdir()
    project.write_text("[risk]\nblock = 0.8\n")
    first = fastconfig.view(cwd=git_repo)
    assert first.risk.block == 0.8
    assert first.to_dict() == config.load(cwd=git_repo).config.model_dump(mode="json")
    cached = list((paths.cache_dir() / "config").glob("*.json"))
    assert len(cached) == 1
    time.sleep(0.01)
    project.write_text("[risk]\nblock = 0.7\n")  # new size/mtime: the cache entry is stale
    config.reset()
    assert fastconfig.view(cwd=git_repo).risk.block == 0.7


def test_a_changed_config_schema_refreshes_the_cached_view(git_repo: Path, monkeypatch):
    """A checkout that changed the config model (a new key, a new guard) without a new version
    number must not be handed a view cached by the old code, which lacks the new keys."""
    schema = git_repo / "model.py"
    schema.write_text("# the model, before\n")
    monkeypatch.setattr(fastconfig, "SCHEMA_FILES", (str(schema),))
    fastconfig.view(cwd=git_repo)
    [entry] = (paths.cache_dir() / "config").glob("*.json")
    data = json.loads(entry.read_text())
    data["config"]["risk"].pop("max_input_bytes")  # what an older model wrote
    entry.write_text(json.dumps(data))
    config.reset()
    assert "max_input_bytes" not in fastconfig.view(cwd=git_repo).risk  # the stale entry hits
    time.sleep(0.01)
    schema.write_text("# the model, after: it has a new key\n")
    config.reset()
    assert fastconfig.view(cwd=git_repo).risk.max_input_bytes == 1024 * 1024


def test_view_never_caches_an_invalid_config(git_repo: Path):
    project = git_repo / ".ecc" / "config.toml"
    project.parent.mkdir()
    project.write_text("[risk]\nblock = 7\n")
    with pytest.raises(ConfigError, match=r"risk\.block"):
        fastconfig.view(cwd=git_repo)
    assert not (paths.cache_dir() / "config").exists() or not list(
        (paths.cache_dir() / "config").glob("*.json")
    )


def test_view_reads_environment_overrides(monkeypatch, git_repo: Path):
    monkeypatch.setenv("ECC__TOKEN_BUDGET", "77")
    assert fastconfig.view(cwd=git_repo).token_budget == 77
    monkeypatch.setenv("ECC__TOKEN_BUDGET", "78")
    config.reset()
    assert fastconfig.view(cwd=git_repo)["token_budget"] == 78


def test_plugin_discovery_cache_sees_new_distributions(tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    env = {"PYTHONPATH": str(site)}
    before = {row["name"] for row in json.loads(run_ecc("plugins", "--json", env=env).stdout)}
    assert "extra" not in before
    time.sleep(0.01)  # the directory's mtime must move
    make_distribution(
        site,
        "ecc-test-extra",
        {"ecc_test_extra": "from ecc.contract.hookspecs import hookimpl\n"},
        "[ecc.adapters]\nextra = ecc_test_extra\n",
    )
    after = {row["name"] for row in json.loads(run_ecc("plugins", "--json", env=env).stdout)}
    assert after == before | {"extra"}


def test_deleting_the_discovery_cache_changes_nothing():
    first = plugins.discover()
    for cached in (paths.cache_dir() / "plugins").glob("*.json"):
        os.unlink(cached)
    assert plugins.discover() == first
    assert ("claude", "ecc_adapter_claude") in first["ecc.adapters"]
