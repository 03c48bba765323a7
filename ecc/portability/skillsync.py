"""Installing a folder of validated skills into one harness's skills directory, and removing it.

Installing records what it wrote in ``<skills dir>/.ecc-install-state.json`` (every file with its
SHA-256, and the directories it had to create), so an uninstall removes exactly that. A file ecc
did not write is never replaced or removed, and a file ecc wrote but someone changed since is
never overwritten or deleted: both stop the whole operation before anything is written.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.portability.skills import Skill, load_source

if TYPE_CHECKING:
    from ecc.contract.types import IntegrationRequest, IntegrationResult

STATE_FILE = ".ecc-install-state.json"
STATE_SCHEMA = "ecc.portability.skills-install.v1"


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
