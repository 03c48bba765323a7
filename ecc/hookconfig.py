"""Helpers adapters use to edit a harness's own JSON hook configuration safely.

Harness knowledge (which file, which event, which protocol) stays in the adapters; this module
only knows how to edit a JSON settings file without disturbing anything else in it:

* a missing file is an empty object; a file that is not a JSON object is refused with an error
  naming it, and nothing is written;
* ecc's entries are recognised by their command (``… ecc hook --harness NAME``), so installing
  twice changes nothing and uninstalling removes exactly those entries (and the containers that
  held only them);
* writes are atomic (temporary file + rename, the original mode kept); ``dry_run`` only returns
  the unified diff.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from ecc.errors import EccError
from ecc.types import IntegrationResult


def ecc_prefix(options: dict[str, Any]) -> str:
    """The command line that runs ecc, as the core chose it (``options["command"]``)."""
    import sys

    return options.get("command") or shlex.join([sys.executable, "-m", "ecc"])


def hook_command(options: dict[str, Any], harness: str, event: str | None = None) -> str:
    command = f"{ecc_prefix(options)} hook --harness {harness}"
    return f"{command} --event {event}" if event else command


def is_ecc_command(command: object, harness: str) -> bool:
    return isinstance(command, str) and bool(
        re.search(rf"(^|[\s/'\"])ecc['\"]? hook --harness {re.escape(harness)}(\s|$)", command)
    )


def read_json(path: Path, what: str) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` and its original text (None when the file does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise EccError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EccError(
            f"{what} {path} is not valid JSON ({exc}); fix or move it, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise EccError(f"{what} {path} is not a JSON object; nothing was changed")
    return data, text


def write_json(
    path: Path, data: dict[str, Any], original: str | None, dry_run: bool, *, delete_if_empty: bool
) -> IntegrationResult:
    """Write ``data`` (or delete an emptied file ecc created) unless nothing changed."""
    new_text = "" if (delete_if_empty and not data) else json.dumps(data, indent=2) + "\n"
    old_text = original or ""
    if new_text == old_text or (original is None and not data):
        return IntegrationResult(message=f"{path}: already up to date")
    diff = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path) if original is not None else "/dev/null",
            tofile=str(path) if new_text else "/dev/null",
        )
    )
    if not dry_run:
        if not new_text:
            path.unlink()
        else:
            write_text(path, new_text)
    return IntegrationResult(changed_files=[path], diff=diff, message=f"{path}: updated")


def write_text(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def remove_command_hooks(data: dict[str, Any], harness: str) -> dict[str, Any]:
    """A copy of ``data`` without ecc's entries in ``hooks.EVENT[].hooks[]``."""
    data = json.loads(json.dumps(data))
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not _is_ecc_hook(h, harness)]
            if kept or len(kept) == len(inner):
                group["hooks"] = kept
                kept_groups.append(group)
        if kept_groups or not groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return data


def add_command_hooks(
    data: dict[str, Any], harness: str, entries: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """``data`` with exactly one ecc group per event of ``entries`` (EVENT -> matcher group).

    Returns ``data`` itself when it already holds exactly those groups (idempotent).
    """
    hooks = data.get("hooks", {})
    if "hooks" in data and not isinstance(hooks, dict):
        raise EccError('the "hooks" setting is not a JSON object; nothing was changed')
    every_group = [g for groups in hooks.values() if isinstance(groups, list) for g in groups]
    present = all(
        isinstance(hooks.get(event), list) and hooks[event].count(entry) == 1
        for event, entry in entries.items()
    )
    if present and _ecc_count(every_group, harness) == len(entries):
        return data
    cleaned = remove_command_hooks(data, harness)
    target = cleaned.setdefault("hooks", {})
    for event, entry in entries.items():
        groups = target.setdefault(event, [])
        if not isinstance(groups, list):
            raise EccError(f'the hooks setting "{event}" is not a list; nothing was changed')
        groups.append(entry)
    return cleaned


def _is_ecc_hook(hook: object, harness: str) -> bool:
    return isinstance(hook, dict) and is_ecc_command(hook.get("command"), harness)


def _ecc_count(groups: list[Any], harness: str) -> int:
    return sum(
        1
        for group in groups
        if isinstance(group, dict)
        for hook in group.get("hooks") or []
        if _is_ecc_hook(hook, harness)
    )


def edit_hooks_file(
    path: Path,
    what: str,
    harness: str,
    entries: dict[str, dict[str, Any]],
    action: str,
    dry_run: bool,
) -> IntegrationResult:
    """Install or uninstall ecc's command hooks in one Claude-shaped JSON file."""
    data, original = read_json(path, what)
    if action == "install":
        updated = add_command_hooks(data, harness, entries)
    elif action == "uninstall":
        updated = remove_command_hooks(data, harness)
    else:
        raise EccError(f"unknown integration action {action!r}")
    if updated is data or updated == data:
        return IntegrationResult(message=f"{path}: already up to date")
    return write_json(path, updated, original, dry_run, delete_if_empty=action == "uninstall")
