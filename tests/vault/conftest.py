"""Vault fixtures: a real git repository as the project, the real ``files`` backend plugin."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ecc.vault.backend import load_backend
from ecc.vault.service import VaultService
from tests.conftest import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (``.git`` directory) used as the project root."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture
def make_service(repo: Path, isolated_env: Path):
    """Build a service on the files backend obtained through the plugin hook."""

    def build(cwd: Path | None = None, env: dict[str, str] | None = None, **kwargs: Any):
        full_env = dict(os.environ)
        full_env.update(env or {})
        return VaultService(load_backend("files"), cwd=cwd or repo, env=full_env, **kwargs)

    return build


@pytest.fixture
def service(make_service) -> VaultService:
    return make_service()


def memory_input(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "title": "Auth migration status",
        "body": "The migration tests pass; rollout is still pending.",
        "kind": "note",
        "sourceHarness": "codex",
    }
    data.update(overrides)
    return data


def full_memory(**overrides: Any) -> dict[str, Any]:
    memory: dict[str, Any] = {
        "schema": "ecc.memory.v1",
        "id": "mem_20260726_0123456789abcdef0123",
        "title": "Title",
        "kind": "note",
        "scope": "project",
        "trust": "unreviewed",
        "status": "active",
        "sourceHarness": "claude",
        "targetHarnesses": ["claude"],
        "tags": [],
        "links": [],
        "createdAt": "2026-07-26T10:00:00.000Z",
        "updatedAt": "2026-07-26T10:00:00.000Z",
        "body": "Body text",
    }
    memory.update(overrides)
    return memory
