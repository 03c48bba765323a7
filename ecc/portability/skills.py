"""Portable ``SKILL.md`` skills: finding and validating them (installing: :mod:`skillsync`).

A skill is a directory ``<name>/`` holding ``SKILL.md`` (YAML frontmatter between ``---`` lines,
then Markdown instructions) and any supporting files. The same source is installed unchanged into
every harness; only *where* it lands differs, and that is the adapter's business: each adapter's
``ecc_install_integration`` (kind ``skills``) picks its directory and calls
:func:`ecc.portability.skillsync.sync_skills`.

PyYAML is imported only here, and only when a frontmatter is parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    pass

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
# Machine-specific absolute paths: examples must be repo-relative or generic.
LOCAL_PATH_RE = re.compile(
    r"(?<![\w.~/-])(?:/(?:home|Users)/[A-Za-z0-9._-]+|/root(?=/)|[A-Za-z]:\\Users\\[^\\\s]+)"
)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a skill file: where (file, 1-based line, 0 = the file) and what."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "line": self.line, "message": self.message}


@dataclass
class Skill:
    name: str
    directory: Path
    description: str = ""
    origin: str = ""
    problems: list[Problem] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.directory / SKILL_FILE


# -- validation ------------------------------------------------------------------------------


def find_skill_files(target: Path) -> tuple[list[Path], list[Problem]]:
    """The ``SKILL.md`` files under ``target`` (a file, a skill directory or a folder of skills).

    Dot-directories are skipped. In a folder of skills, a subdirectory without ``SKILL.md`` is a
    problem (a skill whose file went missing), as is a folder with no skill at all.
    """
    if target.is_file():
        return [target], []
    if not target.is_dir():
        return [], [Problem(target, 0, "no such file or directory")]
    if (target / SKILL_FILE).is_file():
        return [target / SKILL_FILE], []
    files: list[Path] = []
    problems: list[Problem] = []
    for path in sorted(target.rglob(SKILL_FILE)):
        relative = path.relative_to(target).parts
        if any(part.startswith(".") for part in relative):
            continue
        files.append(path)
    for child in sorted(target.iterdir()):
        if (
            child.is_dir()
            and not child.name.startswith(".")
            and child.name != "__pycache__"
            and not any(child in f.parents for f in files)
        ):
            problems.append(Problem(child, 0, f"skill directory has no {SKILL_FILE}"))
    if not files and not problems:
        problems.append(Problem(target, 0, f"no {SKILL_FILE} found"))
    return files, problems


def _key_lines(node: Any, offset: int) -> dict[str, tuple[int, Any]]:
    """Key -> (1-based file line of the key, value node) for a YAML mapping node."""
    import yaml

    found: dict[str, tuple[int, Any]] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                found[str(key.value)] = (key.start_mark.line + offset, value)
    return found


def validate_file(path: Path) -> Skill:
    """Parse and check one ``SKILL.md``; the result's ``problems`` say what is wrong."""
    skill = Skill(name="", directory=path.parent)
    problems = skill.problems
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(path, 0, f"cannot read: {exc.strerror or exc}"))
        return skill
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.append(Problem(path, line, "not UTF-8 text"))
        return skill
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        problems.append(Problem(path, 0, "file is empty"))
        return skill
    lines = text.split("\n")
    if lines[0].strip() != "---":
        problems.append(
            Problem(path, 1, "no YAML frontmatter: the file must start with a '---' line")
        )
        return skill
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        problems.append(Problem(path, 1, "frontmatter is not closed by a '---' line"))
        return skill
    _check_frontmatter(path, "\n".join(lines[1:end]) + "\n", skill)
    if not "\n".join(lines[end + 1 :]).strip():
        problems.append(
            Problem(path, end + 1, "no instructions after the frontmatter (the body is empty)")
        )
    _check_text(path, lines, problems)
    return skill


def _check_frontmatter(path: Path, source: str, skill: Skill) -> None:
    import yaml

    problems = skill.problems
    offset = 2  # YAML line 0 is file line 2 (after the opening ---)
    try:
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + offset if mark is not None else 1
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(Problem(path, line, f"frontmatter is not valid YAML: {what}"))
        return
    if not isinstance(data, dict):
        problems.append(Problem(path, 1, "frontmatter must be a YAML mapping (key: value lines)"))
        return
    keys = _key_lines(node, offset)

    # name
    if "name" not in data:
        problems.append(Problem(path, 1, "missing required field 'name'"))
    else:
        line = keys["name"][0]
        name = data["name"]
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem(path, line, "'name' must be a non-empty string"))
        elif not NAME_RE.match(name) or len(name) > MAX_NAME:
            problems.append(
                Problem(
                    path,
                    line,
                    f"'name' {name!r} must be lowercase letters and digits joined by single "
                    f"hyphens, at most {MAX_NAME} characters",
                )
            )
        else:
            skill.name = name
            if path.name == SKILL_FILE and name != path.parent.name:
                problems.append(
                    Problem(
                        path,
                        line,
                        f"'name' {name!r} does not match its directory {path.parent.name!r} "
                        "(harnesses load a skill by its directory name)",
                    )
                )

    # description
    if "description" not in data:
        problems.append(Problem(path, 1, "missing required field 'description'"))
    else:
        line, value_node = keys["description"]
        description = data["description"]
        if not isinstance(description, str) or not description.strip():
            problems.append(Problem(path, line, "'description' must be a non-empty string"))
        elif getattr(value_node, "style", None) == "|":
            problems.append(
                Problem(
                    path,
                    line,
                    "'description' is a literal block scalar (|); write it on one line or as a "
                    "folded scalar (>)",
                )
            )
        elif "\n" in description.strip():
            problems.append(Problem(path, line, "'description' must be one line"))
        elif len(description) > MAX_DESCRIPTION:
            problems.append(
                Problem(
                    path,
                    line,
                    f"'description' is {len(description)} characters (at most {MAX_DESCRIPTION})",
                )
            )
        else:
            skill.description = description.strip()

    # origin: top level, or metadata.origin as the shipped reference skills have it
    origin: Any = None
    origin_line = 1
    if "origin" in data:
        origin, origin_line = data["origin"], keys["origin"][0]
    elif isinstance(data.get("metadata"), dict) and "origin" in data["metadata"]:
        origin = data["metadata"]["origin"]
        nested = _key_lines(keys["metadata"][1], offset)
        origin_line = nested.get("origin", (keys["metadata"][0], None))[0]
    else:
        problems.append(
            Problem(
                path,
                1,
                "missing origin metadata: add 'origin: <where the skill comes from>' "
                "(or 'metadata: {origin: ...}')",
            )
        )
        return
    if not isinstance(origin, str) or not origin.strip():
        problems.append(Problem(path, origin_line, "'origin' must be a non-empty string"))
    else:
        skill.origin = origin.strip()


def _check_text(path: Path, lines: list[str], problems: list[Problem]) -> None:
    from ecc.vault.secrets import find_potential_secrets

    for number, line in enumerate(lines, start=1):
        for label in find_potential_secrets(line):
            problems.append(
                Problem(
                    path,
                    number,
                    f"looks like a {label}: skills must not embed credentials "
                    "(name the environment variable or use a placeholder)",
                )
            )
        for match in LOCAL_PATH_RE.finditer(line):
            problems.append(
                Problem(
                    path,
                    number,
                    f"machine-specific path {match.group(0)!r}: keep examples repo-relative "
                    "or generic",
                )
            )


def validate(targets: list[Path]) -> tuple[list[Skill], list[Problem]]:
    """Every skill found under ``targets`` and every problem, in a stable order."""
    skills: list[Skill] = []
    problems: list[Problem] = []
    seen: dict[str, Path] = {}
    for target in targets:
        files, found = find_skill_files(target)
        problems += found
        for path in files:
            skill = validate_file(path)
            if skill.name and skill.name in seen and seen[skill.name] != path:
                skill.problems.append(
                    Problem(path, 0, f"skill {skill.name!r} is also defined in {seen[skill.name]}")
                )
            elif skill.name:
                seen[skill.name] = path
            skills.append(skill)
            problems += skill.problems
    return skills, problems


def load_source(source: Path) -> list[Skill]:
    """The valid skills of a source folder; any problem refuses the whole folder."""
    if not source.is_dir():
        raise EccError(f"skills source {source} is not a directory")
    skills, problems = validate([source])
    if problems:
        shown = "\n  ".join(str(p) for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise EccError(
            f"skills in {source} are not valid (run `ecc skills validate`); nothing was "
            f"installed:\n  {shown}{more}"
        )
    return skills
