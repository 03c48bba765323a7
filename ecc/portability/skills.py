"""Portable ``SKILL.md`` skills: validation, and installing a folder of skills into a harness.

A skill is a directory ``<name>/`` holding ``SKILL.md`` (YAML frontmatter between ``---`` lines,
then Markdown instructions) and any supporting files. The same source is installed unchanged into
every harness; only *where* it lands differs, and that is the adapter's business: each adapter's
``ecc_install_integration`` (kind ``skills``) picks its directory and calls :func:`sync_skills`.

Installing records what it wrote in ``<skills dir>/.ecc-install-state.json`` (every file with its
SHA-256, and the directories it had to create), so an uninstall removes exactly that. A file ecc
did not write is never replaced or removed, and a file ecc wrote but someone changed since is
never overwritten or deleted: both stop the whole operation before anything is written.

PyYAML is imported only here, and only when a frontmatter is parsed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from ecc.contract.types import IntegrationRequest, IntegrationResult

SKILL_FILE = "SKILL.md"
STATE_FILE = ".ecc-install-state.json"
STATE_SCHEMA = "ecc.portability.skills-install.v1"
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


# -- install / uninstall ---------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _skill_files(skill: Skill) -> dict[str, tuple[bytes, bool]]:
    """Relative destination path -> (content, executable) for every file of a skill."""
    files: dict[str, tuple[bytes, bool]] = {}
    for path in sorted(skill.directory.rglob("*")):
        relative = path.relative_to(skill.directory)
        if any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
            continue
        if path.is_symlink():
            raise EccError(f"{path} is a symlink; skills are copied as regular files only")
        if path.is_file():
            executable = os.access(path, os.X_OK)
            files[f"{skill.directory.name}/{relative.as_posix()}"] = (path.read_bytes(), executable)
    return files


def read_state(root: Path) -> dict[str, Any] | None:
    path = root / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EccError(f"install record {path} is unreadable ({exc}); nothing was changed")
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise EccError(f"install record {path} is not an ecc skills record; nothing was changed")
    return data


def _current(path: Path) -> bytes | None:
    if path.is_symlink():
        raise EccError(f"{path} is a symlink; ecc does not write through it, nothing was changed")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise EccError(f"{path} is a directory where a skill file belongs; nothing was changed")


def _diff(path: Path, old: bytes | None, new: bytes | None) -> str:
    try:
        old_text = (old or b"").decode("utf-8")
        new_text = (new or b"").decode("utf-8")
    except UnicodeDecodeError:
        return f"Binary file {path} {'added' if old is None else 'changed'}\n"
    return "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path) if old is not None else "/dev/null",
            tofile=str(path) if new is not None else "/dev/null",
        )
    )


def _missing_dirs(directory: Path) -> list[Path]:
    """``directory`` and its ancestors that do not exist, outermost first."""
    missing: list[Path] = []
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    return list(reversed(missing))


def sync_skills(harness: str, root: Path, request: IntegrationRequest) -> IntegrationResult:
    """Install (``request.options["source"]``) or uninstall ecc's skills in ``root``.

    ``root`` is the harness's skills directory, chosen by its adapter. Idempotent; honours
    ``request.dry_run``; refuses, before writing anything, to replace or delete a file it did not
    write or that was changed since it wrote it.
    """
    from ecc.contract.types import IntegrationResult
    from ecc.portability.harnessfiles import write_text

    root = Path(os.path.abspath(root))
    state = read_state(root)
    owned: dict[str, str] = dict(state["files"]) if state else {}
    created: list[str] = list(state.get("created_dirs", [])) if state else []
    wanted: dict[str, tuple[bytes, bool]] = {}
    names: list[str] = []
    if request.action == "install":
        source = request.options.get("source")
        if not source:
            raise EccError("no skills source folder given")
        for skill in load_source(Path(source)):
            names.append(skill.name)
            wanted.update(_skill_files(skill))
    elif request.action != "uninstall":
        raise EccError(f"unknown integration action {request.action!r}")

    refusals: list[str] = []
    writes: dict[str, bytes] = {}
    removals: list[str] = []
    for relative, (content, _) in wanted.items():
        current = _current(root / relative)
        if current == content:
            continue  # already there (ecc's, or the same bytes someone else put there)
        if current is not None and relative not in owned:
            refusals.append(f"{root / relative} exists and was not installed by ecc")
        elif current is not None and _sha(current) != owned[relative]:
            refusals.append(f"{root / relative} was changed since ecc installed it")
        else:
            writes[relative] = content
    for relative, digest in owned.items():
        if relative in wanted:
            continue
        current = _current(root / relative)
        if current is None:
            continue
        if _sha(current) != digest:
            refusals.append(f"{root / relative} was changed since ecc installed it")
        else:
            removals.append(relative)
    if refusals:
        raise EccError(
            "skills not "
            + ("installed" if request.action == "install" else "uninstalled")
            + f" into {root} (nothing was changed):\n  "
            + "\n  ".join(refusals)
        )

    new_owned = {rel: _sha(content) for rel, (content, _) in wanted.items() if rel in owned}
    new_owned.update({rel: _sha(content) for rel, content in writes.items()})
    result = IntegrationResult(location=root)
    for relative, content in writes.items():
        path = root / relative
        result.diff += _diff(path, _current(path), content)
        result.changed_files.append(path)
    for relative in removals:
        path = root / relative
        result.diff += _diff(path, _current(path), None)
        result.changed_files.append(path)
    state_path = root / STATE_FILE
    keep_state = bool(new_owned)
    state_changed = keep_state != (state is not None) or (keep_state and new_owned != owned)
    label = f"{harness} skills in {root}"
    if not result.changed_files and not state_changed:
        result.message = f"{label}: already up to date"
        return result
    if state_changed:
        result.changed_files.append(state_path)
    if request.action == "install":
        result.message = f"{label}: installed {', '.join(names) or 'nothing'}"
    else:
        result.message = f"{label}: removed {len(removals)} file(s) ecc had installed"
    if request.dry_run:
        return result

    for relative, content in writes.items():
        path = root / relative
        for directory in _missing_dirs(path.parent):
            directory.mkdir()
            created.append(os.path.relpath(directory, root))
        _write_bytes(path, content, 0o755 if wanted[relative][1] else 0o644)
    for relative in removals:
        (root / relative).unlink()
    if keep_state:
        record = {
            "schema": STATE_SCHEMA,
            "harness": harness,
            "source": str(request.options.get("source") or (state or {}).get("source", "")),
            "files": dict(sorted(new_owned.items())),
            "created_dirs": sorted(set(created)),
        }
        write_text(state_path, json.dumps(record, indent=2) + "\n")
    else:
        state_path.unlink(missing_ok=True)
    _prune(root, created, keep_root=keep_state)
    return result


def _write_bytes(path: Path, content: bytes, mode: int) -> None:
    """Atomically (temporary file + rename) write ``content`` to ``path`` with ``mode``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _prune(root: Path, created: list[str], *, keep_root: bool) -> None:
    """Remove the directories ecc created that are now empty, deepest first."""
    for relative in sorted(set(created), key=lambda r: -len(Path(root, r).resolve().parts)):
        directory = Path(os.path.normpath(root / relative))
        if keep_root and (directory == root or directory in root.parents):
            continue
        try:
            directory.rmdir()
        except OSError:
            pass  # not empty (someone else's files) or already gone
