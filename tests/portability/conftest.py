"""Fixtures for the portability tests: a git project with a folder of valid skills."""

from __future__ import annotations

from pathlib import Path

import pytest

SKILL = """---
name: {name}
description: {description}
origin: ECC
---
# {name}

Use this skill when the repository needs tidying. Run `make format` from the repository root.
"""


def write_skill(
    root: Path, name: str, description: str = "Tidy a repository.", files: dict | None = None
) -> Path:
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(SKILL.format(name=name, description=description))
    for relative, text in (files or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


@pytest.fixture(autouse=True)
def no_harness_homes(monkeypatch: pytest.MonkeyPatch) -> None:
    # CODEX_HOME would point the codex adapter outside the test's HOME
    monkeypatch.delenv("CODEX_HOME", raising=False)


@pytest.fixture
def project(git_repo: Path) -> Path:
    """A git repository whose skills/ holds two valid skills (one with a helper script)."""
    skills = git_repo / "skills"
    write_skill(skills, "tidy-up")
    helper = write_skill(
        skills,
        "release-notes",
        "Draft release notes from the git log. Use when preparing a release.",
        {"scripts/collect.sh": "#!/bin/sh\ngit log --oneline\n"},
    )
    (helper / "scripts" / "collect.sh").chmod(0o755)
    return git_repo
