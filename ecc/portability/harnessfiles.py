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

from ecc.contract.errors import EccError
from ecc.contract.types import IntegrationResult


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
    new_text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if delete_if_empty and not data:
        new_text = ""
    if original is None and not data:
        return IntegrationResult(message=f"{path}: already up to date")
    return write_change(path, original, new_text, dry_run)


def write_change(
    path: Path, original: str | None, new_text: str, dry_run: bool
) -> IntegrationResult:
    """Replace ``path``'s text ``original`` (None: no file) by ``new_text`` ("": delete it).

    Returns the unified diff; writes nothing when ``dry_run`` or when nothing changed.
    """
    old_text = original or ""
    if new_text == old_text:
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


# -- MCP server registration -----------------------------------------------------------------

MCP_SERVER_NAME = "ecc-memory"


def mcp_argv(options: dict[str, Any]) -> list[str]:
    """The argv that starts ``ecc-memory-mcp``, as the core chose it (``options["mcp_command"]``).

    Without one: the console script next to this interpreter, else ``python -m ecc.mcp.server``;
    both absolute, so the harness's PATH does not matter.
    """
    import sys

    chosen = options.get("mcp_command")
    if chosen:
        return [str(part) for part in chosen]
    script = Path(sys.executable).parent / "ecc-memory-mcp"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "ecc.mcp.server"]


def edit_mcp_json(
    path: Path,
    what: str,
    container: str,
    entry: dict[str, Any],
    action: str,
    dry_run: bool,
    name: str = MCP_SERVER_NAME,
) -> IntegrationResult:
    """Add (``install``) or remove (``uninstall``) the server ``name`` in ``data[container]``.

    ``container`` is the harness's own key (``mcpServers``, ``mcp``). Everything else in the file
    is kept; an entry that already equals ``entry`` means nothing to do; a container emptied by
    the uninstall is removed, and a file left empty is deleted.
    """
    data, original = read_json(path, what)
    servers = data.get(container)
    if container in data and not isinstance(servers, dict):
        raise EccError(f'"{container}" in {what} {path} is not a JSON object; nothing was changed')
    updated = json.loads(json.dumps(data))
    if action == "install":
        if isinstance(servers, dict) and servers.get(name) == entry:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        updated.setdefault(container, {})[name] = entry
    elif action == "uninstall":
        if not isinstance(servers, dict) or name not in servers:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        del updated[container][name]
        if not updated[container]:
            del updated[container]
    else:
        raise EccError(f"unknown integration action {action!r}")
    result = write_json(path, updated, original, dry_run, delete_if_empty=action == "uninstall")
    result.location = path
    return result


def edit_mcp_toml(
    path: Path,
    what: str,
    table: str,
    entry: dict[str, Any],
    action: str,
    dry_run: bool,
    name: str = MCP_SERVER_NAME,
) -> IntegrationResult:
    """The TOML twin of :func:`edit_mcp_json` (``[table.name]``), keeping comments and layout.

    tomlkit edits the document in place, so every other key, comment and blank line stays as
    the user wrote it; a file that does not parse is refused and left untouched.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        original: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        original = None
    except OSError as exc:
        raise EccError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        document = tomlkit.parse(original or "")
    except TOMLKitError as exc:
        raise EccError(
            f"{what} {path} is not valid TOML ({exc}); fix or move it, nothing was changed"
        ) from None
    servers = document.get(table)
    if servers is not None and not isinstance(servers, dict):
        raise EccError(f'"{table}" in {what} {path} is not a table; nothing was changed')
    current = servers.get(name) if servers is not None else None
    if action == "install":
        plain = current.unwrap() if current is not None and hasattr(current, "unwrap") else current
        if plain == entry:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        server = tomlkit.table()
        for key, value in entry.items():
            if isinstance(value, dict):
                inline = tomlkit.inline_table()
                inline.update(value)
                server[key] = inline
            else:
                server[key] = value
        server.add(tomlkit.nl())  # a blank line before whatever table follows
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            document[table] = servers
        servers[name] = server
    elif action == "uninstall":
        if current is None or servers is None:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        del servers[name]
        if not servers:
            del document[table]
    else:
        raise EccError(f"unknown integration action {action!r}")
    new_text = tomlkit.dumps(document)
    # tomlkit leaves the blank lines around an added or removed table: keep one final newline
    new_text = new_text.rstrip("\n") + "\n" if new_text.strip() else ""
    if action == "install" and original is not None and not original.strip():
        new_text = new_text.lstrip("\n")
    result = write_change(path, original, new_text, dry_run)
    result.location = path
    return result
