"""``ecc harness matrix``: declared surfaces, detection and what ecc installed in this project."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_ecc

SURFACES = ["direct", "structured_output", "resume", "hooks", "enforcement", "mcp", "skills"]
FIRST_PARTY = ("claude", "codex", "gemini", "opencode")


def matrix(repo: Path) -> dict:
    done = run_ecc("harness", "matrix", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_json_reports_what_the_adapters_declare(git_repo: Path) -> None:
    payload = matrix(git_repo)
    assert payload["schema_version"] == "ecc.harness-matrix.v1"
    assert payload["surfaces"] == SURFACES
    assert payload["project"] == str(git_repo)
    rows = {row["name"]: row for row in payload["harnesses"]}
    assert set(FIRST_PARTY) | {"shell"} <= set(rows)
    for name in FIRST_PARTY:
        assert all(rows[name]["surfaces"].values()), rows[name]["surfaces"]
        assert rows[name]["installed"] == {"hooks": False, "mcp": False, "skills": False}
        assert rows[name]["detected"] is False
    assert "disallowed_tools" in rows["claude"]["profile_fields"]
    assert rows["opencode"]["profile_fields"] == ["model", "permission_mode"]
    shell = rows["shell"]["surfaces"]
    assert shell["direct"] is True
    assert not any(shell[s] for s in ("hooks", "enforcement", "mcp", "skills"))
    assert rows["shell"]["installed"] == {"hooks": None, "mcp": None, "skills": None}


def test_detected_and_installed_follow_the_project(git_repo: Path) -> None:
    (git_repo / "GEMINI.md").write_text("# gemini notes\n")
    skills = git_repo / "skills" / "tidy-up"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: tidy-up\ndescription: Tidy.\norigin: ECC\n---\nRun make format.\n"
    )
    for command in (
        ("mcp", "install", "--harness", "claude"),
        ("hooks", "install", "--harness", "codex"),
        ("skills", "install", "--harness", "opencode"),
    ):
        done = run_ecc(*command, cwd=git_repo)
        assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in matrix(git_repo)["harnesses"]}
    assert rows["gemini"]["detected"] is True
    assert rows["codex"]["detected"] is True  # .codex/ now exists (the hooks file)
    assert rows["claude"]["installed"] == {"hooks": False, "mcp": True, "skills": False}
    assert rows["codex"]["installed"] == {"hooks": True, "mcp": False, "skills": False}
    assert rows["opencode"]["installed"] == {"hooks": False, "mcp": False, "skills": True}
    # the matrix only reads: the files it looked at are unchanged
    assert json.loads((git_repo / ".mcp.json").read_text())["mcpServers"]["ecc-memory"]


def test_a_broken_config_shows_as_an_error_in_its_cell(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text("{broken")
    rows = {row["name"]: row for row in matrix(git_repo)["harnesses"]}
    assert rows["claude"]["installed"]["mcp"].startswith("error: ")
    assert "not valid JSON" in rows["claude"]["installed"]["mcp"]
    assert (git_repo / ".mcp.json").read_text() == "{broken"


def test_markdown_and_text_tables(git_repo: Path) -> None:
    (git_repo / "CLAUDE.md").write_text("notes\n")
    done = run_ecc("harness", "matrix", "--markdown", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("| harness | direct execution | structured output | resume |")
    assert lines[1].startswith("|---|")
    claude = next(line for line in lines if line.startswith("| claude |"))
    cells = [c.strip() for c in claude.strip("|").split("|")]
    assert cells[1:8] == ["yes"] * 7
    assert "max_budget_usd" in cells[8]
    assert cells[9] == "yes"  # detected (CLAUDE.md)
    shell = next(line for line in lines if line.startswith("| shell |"))
    assert [c.strip() for c in shell.strip("|").split("|")][4:8] == ["-"] * 4
    text = run_ecc("harness", "matrix", cwd=git_repo)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].split()[:8] == [
        "harness", "direct", "output", "resume", "hooks", "enforce", "mcp", "skills",
    ]  # fmt: skip
    assert any(
        line.startswith("codex: profile fields add_dirs") for line in text.stdout.splitlines()
    )
