"""``ecc skills validate``: every rule, each reported with its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecc.portability.skills import validate
from tests.conftest import run_ecc


def skill_file(tmp_path: Path, text: str, directory: str = "my-skill") -> Path:
    path = tmp_path / "skills" / directory / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


GOOD = "---\nname: my-skill\ndescription: Do one thing well.\norigin: ECC\n---\n# Body\ntext\n"


def problems_of(path: Path) -> list[tuple[int, str]]:
    _, problems = validate([path])
    return [(p.line, p.message) for p in problems]


def test_a_good_skill_has_no_problems(tmp_path: Path) -> None:
    path = skill_file(tmp_path, GOOD)
    skills, problems = validate([path.parent.parent])
    assert problems == []
    (skill,) = skills
    assert (skill.name, skill.description, skill.origin) == (
        "my-skill",
        "Do one thing well.",
        "ECC",
    )


def test_bom_and_crlf_are_tolerated_and_nested_origin_is_accepted(tmp_path: Path) -> None:
    text = "\ufeff" + GOOD.replace("origin: ECC\n", "metadata:\n  origin: ECC\n")
    path = skill_file(tmp_path, text.replace("\n", "\r\n"))
    skills, problems = validate([path])
    assert problems == []
    assert skills[0].origin == "ECC"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 0, "file is empty"),
        ("# no frontmatter\n", 1, "must start with a '---' line"),
        ("---\nname: my-skill\n", 1, "not closed"),
        (
            "---\nname: my-skill\ndescription: [unclosed\norigin: ECC\n---\nbody\n",
            4,
            "not valid YAML",
        ),
        ("---\n- a list\n---\nbody\n", 1, "must be a YAML mapping"),
        ("---\ndescription: d\norigin: ECC\n---\nbody\n", 1, "missing required field 'name'"),
        ("---\nname: My Skill\ndescription: d\norigin: ECC\n---\nbody\n", 2, "lowercase"),
        ("---\nname: other\ndescription: d\norigin: ECC\n---\nbody\n", 2, "does not match"),
        ("---\nname: my-skill\norigin: ECC\n---\nbody\n", 1, "'description'"),
        ("---\nname: my-skill\norigin: ECC\ndescription: ''\n---\nbody\n", 4, "non-empty"),
        (
            "---\nname: my-skill\ndescription: |\n  two\n  lines\norigin: ECC\n---\nbody\n",
            3,
            "literal block scalar",
        ),
        ("---\nname: my-skill\ndescription: d\n---\nbody\n", 1, "missing origin metadata"),
        ("---\nname: my-skill\ndescription: d\nmetadata:\n  origin: 3\n---\nbody\n", 5, "origin"),
        ("---\nname: my-skill\ndescription: d\norigin: ECC\n---\n\n", 5, "body is empty"),
    ],
)
def test_each_frontmatter_problem_names_its_line(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = skill_file(tmp_path, text)
    found = problems_of(path)
    assert any(n == line and fragment in message for n, message in found), found


def test_a_folded_description_is_accepted(tmp_path: Path) -> None:
    text = GOOD.replace("description: Do one thing well.", "description: >\n  Do one\n  thing.")
    assert problems_of(skill_file(tmp_path, text)) == []


def test_secrets_are_reported_by_line_without_echoing_them(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0"
    text = GOOD + f"\nExport GITHUB_TOKEN={token} first.\n"
    path = skill_file(tmp_path, text)
    found = problems_of(path)
    assert found == [(9, found[0][1])]
    assert "GitHub token" in found[0][1]
    assert token not in found[0][1]


def test_machine_specific_paths_are_reported(tmp_path: Path) -> None:
    text = GOOD + "Open /home/alice/projects/app/main.py, or C:\\Users\\bob\\app.\nUse ./src.\n"
    found = problems_of(skill_file(tmp_path, text))
    assert [n for n, _ in found] == [8, 8]
    assert "'/home/alice'" in found[0][1]
    assert "repo-relative" in found[0][1]


def test_a_skill_directory_without_skill_md_and_dot_directories(tmp_path: Path) -> None:
    skill_file(tmp_path, GOOD)
    (tmp_path / "skills" / "half-done").mkdir()
    hidden = tmp_path / "skills" / ".drafts" / "x" / "SKILL.md"
    hidden.parent.mkdir(parents=True)
    hidden.write_text("broken")
    skills, problems = validate([tmp_path / "skills"])
    assert [s.name for s in skills] == ["my-skill"]
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'skills' / 'half-done'}: skill directory has no SKILL.md"
    ]


def test_cli_prints_file_line_problems_and_exits_1(git_repo: Path) -> None:
    good = skill_file(git_repo, GOOD)
    bad = skill_file(git_repo, "---\nname: bad-one\ndescription: d\n---\nbody\n", "bad-one")
    done = run_ecc("skills", "validate", cwd=git_repo)
    assert done.returncode == 1
    assert f"{bad}:1: missing origin metadata" in done.stderr
    assert str(good) not in done.stderr
    assert "2 skill(s) checked, 1 problem(s)" in done.stdout
    as_json = run_ecc("skills", "validate", "--json", str(good), cwd=git_repo)
    assert as_json.returncode == 0, as_json.stderr
    payload = json.loads(as_json.stdout)
    assert payload["valid"] is True
    assert payload["skills"][0]["name"] == "my-skill"


def test_cli_without_a_skills_folder_is_a_clear_error(git_repo: Path) -> None:
    done = run_ecc("skills", "validate", cwd=git_repo)
    assert done.returncode == 1
    assert "no skills folder" in done.stderr
    missing = run_ecc("skills", "validate", "nowhere", cwd=git_repo)
    assert missing.returncode == 1
    assert "nowhere: no such file or directory" in missing.stderr
