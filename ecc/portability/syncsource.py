"""The shared source of ``ecc sync``, read and validated once for every harness.

The source is the project's own files (the instructions file, ``rules/*.md``, ``commands/*.md``)
and its ``[[sync.hooks]]``. A repository is untrusted data, so each file is read as a regular
file inside the project, never through a symlink, at most :data:`MAX_FILE_BYTES`, as UTF-8; a
bad one is refused in one line naming it, before any harness file is written.

Rules and commands may open with a small front matter (``---`` lines around ``key: value``
lines); ``description`` and ``argument-hint`` are read, other keys are kept out of the text.
:func:`front_matter` writes one back, for renderers whose harness reads the same shape.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.types import SyncCommand, SyncHook, SyncRule, SyncSource

MAX_FILE_BYTES = 256 * 1024
MAX_FILES = 500  # per folder: a source, not a data set
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_KEY_RE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")


def _relative(project: Path, path: Path) -> str:
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)


def check_inside(project: Path, path: Path) -> str:
    """``path``'s path relative to ``project``, refusing one outside it or through a symlink.

    Every existing level below the project is looked at without following links, so a
    committed ``.claude -> ~/.ssh`` cannot send a read or a write elsewhere.
    """
    normal = Path(os.path.normpath(path if path.is_absolute() else project / path))
    try:
        parts = normal.relative_to(project).parts
    except ValueError:
        raise EccError(f"{path} is outside the project {project}; nothing was written") from None
    if not parts:
        raise EccError(f"{path} is the project directory itself, not a file in it")
    current = project
    for part in parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                raise EccError(
                    f"{_relative(project, current)} is a symlink; ecc sync neither reads nor "
                    "writes through one (replace it by a regular file or folder)"
                )
        except FileNotFoundError:
            break
    return "/".join(parts)


def read_text(project: Path, path: Path, limit: int = MAX_FILE_BYTES) -> str | None:
    """The UTF-8 text of the regular file ``path`` inside ``project`` (at most ``limit``
    bytes); None if it is absent."""
    name = check_inside(project, path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(project / name, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EccError(f"cannot read {name}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise EccError(f"{name} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise EccError(f"{name} is over {limit // 1024} KiB; ecc sync reads smaller files only")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise EccError(f"{name} is not UTF-8 text (byte {exc.start})") from None


def split_front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    """``(fields, body)`` of a text that may open with ``---`` front matter."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[0].strip() != "---":
        return {}, text
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields, "\n".join(lines[number:])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY_RE.match(line)
        if match is None:
            raise EccError(f"{path}:{number}: front matter lines are 'key: value', not {line!r}")
        fields[match.group(1)] = _unquote(match.group(2))
    raise EccError(f"{path}: the front matter opened by '---' on line 1 is never closed")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        import json

        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def front_matter(fields: Mapping[str, str]) -> str:
    """``---`` front matter of the non-empty ``fields`` ('' when there are none), each value
    on one line, quoted when YAML would read it otherwise."""
    import json

    lines = []
    for key, value in fields.items():
        if not value:
            continue
        one_line = " ".join(str(value).split())
        plain = re.fullmatch(r"[\w./()<>\[\] ,-]*[\w./()<>\]]", one_line) and not re.match(
            r"^[\[\]<>-]", one_line
        )
        shown = one_line if plain else json.dumps(one_line, ensure_ascii=False)
        lines.append(f"{key}: {shown}\n")
    return "---\n" + "".join(lines) + "---\n" if lines else ""


def _markdown_files(project: Path, folder: str, what: str) -> list[tuple[str, Path, str]]:
    """``(name, path, text)`` of each ``*.md`` file of the source folder, sorted by name."""
    directory = project / check_inside(project, project / folder)
    if not directory.is_dir():
        if directory.exists():
            raise EccError(f"{what} source {folder} is not a folder")
        return []
    entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    found: list[tuple[str, Path, str]] = []
    for entry in entries:
        if not entry.name.endswith(".md") or entry.name.startswith("."):
            continue
        relative = f"{folder.rstrip('/')}/{entry.name}"
        name = entry.name[: -len(".md")]
        if not NAME_RE.match(name) or len(name) > 64:
            raise EccError(
                f"{relative}: the name {name!r} must be lowercase letters, digits, '-' and '_' "
                "(at most 64), as every harness names its files"
            )
        if len(found) >= MAX_FILES:
            raise EccError(f"{what} source {folder} has more than {MAX_FILES} files")
        text = read_text(project, Path(entry.path))
        if text is not None:
            found.append((name, Path(entry.path), text))
    return found


def read_source(project: Path, settings: Mapping[str, Any]) -> SyncSource:
    """The validated :class:`SyncSource` of ``project`` for the ``[sync]`` table ``settings``."""
    from ecc.portability.syncmarkers import strip_sections

    project = Path(os.path.abspath(project))
    instructions_name = settings.get("instructions") or "AGENTS.md"
    instructions_path = project / instructions_name
    instructions = read_text(project, instructions_path)
    if instructions is not None:
        instructions = strip_sections(instructions, instructions_name)
        if not instructions.strip():  # only ecc's sections (ecc may have created the file)
            instructions = None
    rules = []
    for name, path, text in _markdown_files(project, settings.get("rules") or "rules", "rules"):
        fields, body = split_front_matter(text, Path(_relative(project, path)))
        rules.append(SyncRule(name, body, fields.get("description", ""), path))
    commands = []
    folder = settings.get("commands") or "commands"
    for name, path, text in _markdown_files(project, folder, "commands"):
        fields, body = split_front_matter(text, Path(_relative(project, path)))
        description, hint = fields.get("description", ""), fields.get("argument-hint", "")
        commands.append(SyncCommand(name, body, description, hint, path))
    hooks = tuple(
        SyncHook(
            event=str(hook["event"]),
            command=str(hook["command"]),
            matcher=str(hook.get("matcher") or ""),
            timeout_secs=int(hook.get("timeout_secs") or 60),
        )
        for hook in settings.get("hooks") or ()
    )
    return SyncSource(
        project_dir=project,
        instructions=instructions or "",
        instructions_path=instructions_path if instructions is not None else None,
        rules=tuple(rules),
        commands=tuple(commands),
        hooks=hooks,
    )
