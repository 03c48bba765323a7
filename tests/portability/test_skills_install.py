"""``ecc skills install|uninstall``: each harness's own directory, idempotent, exact removal."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_ecc
from tests.portability.conftest import write_skill

# Where each adapter declares its skills go (project scope, user scope relative to HOME)
LOCATIONS = {
    "claude": (".claude/skills", ".claude/skills"),
    "codex": (".codex/skills", ".codex/skills"),
    "gemini": (".gemini/skills", ".gemini/skills"),
    "opencode": (".opencode/skills", ".config/opencode/skills"),
}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except git's, with its content."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def dirs(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_dir() and ".git" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize("harness", sorted(LOCATIONS))
def test_project_round_trip_installs_then_removes_exactly_what_it_added(
    project: Path, harness: str
) -> None:
    before_files, before_dirs = tree(project), dirs(project)
    done = run_ecc("skills", "install", "--harness", harness, cwd=project)
    assert done.returncode == 0, done.stderr
    root = project / LOCATIONS[harness][0]
    assert "installed release-notes, tidy-up" in done.stdout
    for name in ("tidy-up", "release-notes"):
        installed = root / name / "SKILL.md"
        assert installed.read_bytes() == (project / "skills" / name / "SKILL.md").read_bytes()
    script = root / "release-notes" / "scripts" / "collect.sh"
    assert script.read_text() == "#!/bin/sh\ngit log --oneline\n"
    assert os.stat(script).st_mode & stat.S_IXUSR
    record = json.loads((root / ".ecc-install-state.json").read_text())
    assert record["harness"] == harness
    assert sorted(record["files"]) == [
        "release-notes/SKILL.md",
        "release-notes/scripts/collect.sh",
        "tidy-up/SKILL.md",
    ]
    snapshot = tree(project)
    again = run_ecc("skills", "install", "--harness", harness, cwd=project)
    assert again.returncode == 0, again.stderr
    assert "already up to date" in again.stdout
    assert tree(project) == snapshot
    gone = run_ecc("skills", "uninstall", "--harness", harness, cwd=project)
    assert gone.returncode == 0, gone.stderr
    assert tree(project) == before_files
    assert dirs(project) == before_dirs


def test_user_scope_lands_in_each_harness_home_directory(project: Path, isolated_env: Path) -> None:
    done = run_ecc("skills", "install", "--all", "--scope", "user", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    locations = {row["harness"]: row["location"] for row in payload["harnesses"]}
    assert locations == {name: str(isolated_env / user) for name, (_, user) in LOCATIONS.items()}
    assert "shell" in payload["unsupported"]
    for _, user in LOCATIONS.values():
        assert (isolated_env / user / "tidy-up" / "SKILL.md").is_file()
    assert not (project / ".claude").exists()
    gone = run_ecc("skills", "uninstall", "--all", "--scope", "user", cwd=project)
    assert gone.returncode == 0, gone.stderr
    assert not any(p.is_file() for p in isolated_env.rglob("SKILL.md"))


def test_dry_run_shows_the_files_and_writes_nothing(project: Path) -> None:
    before = tree(project)
    done = run_ecc("skills", "install", "--harness", "claude", "--dry-run", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "+++ " + str(project / ".claude/skills/tidy-up/SKILL.md") in done.stdout
    assert "+name: tidy-up" in done.stdout
    assert "(dry run) claude: 4 file(s) would change" in done.stdout
    assert tree(project) == before


def test_an_invalid_source_is_refused_before_any_harness_is_touched(project: Path) -> None:
    (project / "skills" / "tidy-up" / "SKILL.md").write_text("---\nname: tidy-up\n---\nbody\n")
    before = tree(project)
    done = run_ecc("skills", "install", "--all", cwd=project)
    assert done.returncode == 1
    assert "nothing was installed" in done.stderr
    assert "SKILL.md:1: missing required field 'description'" in done.stderr
    assert tree(project) == before


def test_a_file_ecc_did_not_write_is_never_replaced(project: Path) -> None:
    mine = project / ".claude" / "skills" / "tidy-up" / "SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own tidy-up skill\n")
    before = tree(project)
    done = run_ecc("skills", "install", "--all", cwd=project)
    assert done.returncode == 1
    assert f"{mine} exists and was not installed by ecc" in done.stderr
    assert tree(project) == before  # no harness was written, not only claude


def test_a_changed_installed_file_is_neither_overwritten_nor_deleted(project: Path) -> None:
    assert run_ecc("skills", "install", "--harness", "gemini", cwd=project).returncode == 0
    installed = project / ".gemini" / "skills" / "tidy-up" / "SKILL.md"
    installed.write_text(installed.read_text() + "\nmy local note\n")
    write_skill(project / "skills", "tidy-up", "A newer description.")
    before = tree(project)
    for action in ("install", "uninstall"):
        done = run_ecc("skills", action, "--harness", "gemini", cwd=project)
        assert done.returncode == 1
        assert f"{installed} was changed since ecc installed it" in done.stderr
        assert tree(project) == before


def test_source_changes_update_and_removed_skills_are_deleted(project: Path) -> None:
    assert run_ecc("skills", "install", "--harness", "codex", cwd=project).returncode == 0
    root = project / ".codex" / "skills"
    write_skill(project / "skills", "tidy-up", "A newer description.")
    for path in sorted((project / "skills" / "release-notes").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (project / "skills" / "release-notes").rmdir()
    done = run_ecc("skills", "install", "--harness", "codex", "--dry-run", cwd=project)
    assert "+description: A newer description." in done.stdout
    assert "--- " + str(root / "release-notes" / "SKILL.md") in done.stdout
    done = run_ecc("skills", "install", "--harness", "codex", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "A newer description." in (root / "tidy-up" / "SKILL.md").read_text()
    assert not (root / "release-notes").exists()
    record = json.loads((root / ".ecc-install-state.json").read_text())
    assert sorted(record["files"]) == ["tidy-up/SKILL.md"]


def test_uninstall_keeps_files_and_directories_ecc_did_not_create(project: Path) -> None:
    skills = project / ".opencode" / "skills"
    theirs = write_skill(skills, "their-skill")
    plugin = project / ".opencode" / "plugin.js"
    plugin.write_text("export default {}\n")
    assert run_ecc("skills", "install", "--harness", "opencode", cwd=project).returncode == 0
    assert run_ecc("skills", "uninstall", "--harness", "opencode", cwd=project).returncode == 0
    assert (theirs / "SKILL.md").is_file()
    assert plugin.is_file()
    assert sorted(p.name for p in skills.iterdir()) == ["their-skill"]
    nothing = run_ecc("skills", "uninstall", "--harness", "opencode", cwd=project)
    assert nothing.returncode == 0
    assert "already up to date" in nothing.stdout


def test_source_option_and_harness_choice_are_checked(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "shared-skills"
    write_skill(elsewhere, "shared-one")
    done = run_ecc(
        "skills", "install", "--harness", "claude-code", "--source", str(elsewhere), cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert (project / ".claude/skills/shared-one/SKILL.md").is_file()
    assert not (project / ".claude/skills/tidy-up").exists()
    both = run_ecc("skills", "install", "--harness", "claude", "--all", cwd=project)
    assert both.returncode == 2
    assert "exactly one of --harness NAME or --all" in both.stderr
    unknown = run_ecc("skills", "install", "--harness", "nope", cwd=project)
    assert unknown.returncode == 1
    assert "unknown harness 'nope'" in unknown.stderr
    shell = run_ecc("skills", "install", "--harness", "shell", cwd=project)
    assert shell.returncode == 1
    assert "no installed adapter can install skills for shell" in shell.stderr
