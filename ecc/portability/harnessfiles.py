"""Helpers adapters use to edit a harness's own JSON hook and MCP configuration safely.

Harness knowledge (which file, which event, which protocol) stays in the adapters; this module
only knows how to edit a JSON settings file without disturbing anything else in it:

* a missing file is an empty object; a file that is not a JSON object (comments allowed, as
  Gemini CLI reads them) is refused with an error naming it, and nothing is written;
* the text is edited in place (:mod:`ecc.portability.jsonctext`): comments, indentation, line
  endings and key order stay, so uninstalling gives back what installing found;
* ecc's entries are recognised by their command (``… ecc hook --harness NAME``), so installing
  twice changes nothing and uninstalling removes exactly those entries (and the containers that
  held only them); a file left empty is deleted with the directories that held only it;
* a symlinked file is edited through its link (:func:`edit_target`; out of the project refused);
* writes are atomic (temporary file + rename, the original mode kept); ``dry_run`` only returns
  the unified diff.

Codex's TOML is :mod:`ecc.portability.tomlconfig`'s.
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


def edit_target(path: Path, root: Path | None) -> Path:
    """The file to read and write for ``path``: itself, or when it is a symlink the file the
    link leads to (written in place, so the link stays a link). ``root`` is the project of a
    project-scope edit: a path leading out of it through a link (the file's or a directory's)
    is refused, as editing a file elsewhere through a repository's link would surprise."""
    real = path.resolve()
    if path.is_symlink() and not path.exists():
        raise EccError(f"{path} is a symlink to {real}, which does not exist; nothing was changed")
    if root is not None and not real.is_relative_to(root.resolve()):
        raise EccError(
            f"{path} leads through a symlink to {real}, outside the project; ecc does not edit "
            "files outside the project through a link, nothing was changed"
        )
    return real if path.is_symlink() else path


def read_config_text(path: Path) -> str:
    """``path``'s text exactly as stored (no newline translation: CRLF stays CRLF)."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EccError(f"{path} is not UTF-8 ({exc.reason}); nothing was changed") from None


def read_json(path: Path, what: str) -> tuple[dict[str, Any], str | None]:
    """The object in ``path`` and its original text (None when the file does not exist).

    JSON with ``//`` and ``/* */`` comments (and trailing commas), as Gemini CLI reads, is
    accepted: :func:`write_json` edits such a file in place, keeping its comments.
    """
    try:
        text = read_config_text(path)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        raise EccError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        from ecc.portability.jsonctext import JsoncError, parse

        try:
            data = parse(text)[0].value
        except JsoncError:
            raise EccError(
                f"{what} {path} is not valid JSON ({exc}); fix or move it, nothing was changed"
            ) from None
    if not isinstance(data, dict):
        raise EccError(f"{what} {path} is not a JSON object; nothing was changed")
    return data, text


class CommentsWouldBeLost(EccError):
    """The JSON edit would remove a comment of the user's; nothing was written."""


def json_text(path: Path, what: str, data: dict[str, Any], original: str | None) -> str:
    """``original`` edited in place to hold ``data``: layout, line endings and comments kept
    (a fresh or blank file gets two-space JSON). Refused when a comment would be lost."""
    if original is None or not original.strip():
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    from ecc.portability.jsonctext import JsoncError, parse, rewrite, same

    comments: list[tuple[int, int]] = []
    try:
        root, comments = parse(original)
        new_text = rewrite(original, root, comments, data)
        if same(parse(new_text)[0].value, data):
            return new_text
    except JsoncError:
        pass
    if comments:
        raise CommentsWouldBeLost(
            f"{what} {path} has comments this edit would not keep; make the change by hand, "
            "nothing was changed"
        )
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_json(
    path: Path,
    data: dict[str, Any],
    original: str | None,
    dry_run: bool,
    *,
    delete_if_empty: bool,
    what: str = "config file",
    link: bool = False,
    prune_to: Path | None = None,
) -> IntegrationResult:
    """Write ``data`` (or delete an emptied file ecc created) unless nothing changed.

    A file with comments is never deleted with them, and one reached through a symlink
    (``link``) is kept as ``{}``, the link left working.
    """
    emptied = delete_if_empty and not data and not _has_comments(original)
    if emptied and not link:
        new_text = ""
    elif emptied and original:
        new_text = "{}" + ("\r\n" if "\r\n" in original else "\n")
    else:
        new_text = json_text(path, what, data, original)
    if original is None and not data:
        return IntegrationResult(message=f"{path}: already up to date")
    return write_change(path, original, new_text, dry_run, prune_to=prune_to)


def _has_comments(text: str | None) -> bool:
    from ecc.portability.jsonctext import JsoncError, parse

    try:
        return bool(text and text.strip() and parse(text)[1])
    except JsoncError:
        return False


def write_change(
    path: Path,
    original: str | None,
    new_text: str,
    dry_run: bool,
    *,
    prune_to: Path | None = None,
) -> IntegrationResult:
    """Replace ``path``'s text ``original`` (None: no file) by ``new_text`` ("": delete it).

    Returns the unified diff; writes nothing when ``dry_run`` or when nothing changed. A file
    deleted takes with it the directories it leaves empty, up to ``prune_to`` (not included).
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
            prune_empty_dirs(path.parent, prune_to)
        else:
            write_text(path, new_text)
    return IntegrationResult(changed_files=[path], diff=diff, message=f"{path}: updated")


def prune_empty_dirs(directory: Path, stop: Path | None) -> None:
    """Remove ``directory`` and its parents while empty, below ``stop`` (default: home)."""
    stop = (stop or Path.home()).absolute()
    directory = directory.absolute()
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


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


def remove_command_hooks(
    data: dict[str, Any], harness: str, *, prune: bool = True
) -> dict[str, Any]:
    """A copy of ``data`` without ecc's entries in ``hooks.EVENT[].hooks[]``, and (``prune``)
    without the event lists and ``hooks`` table left empty."""
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
        if kept_groups or not groups or not prune:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks and prune:
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
    *,
    root: Path | None = None,
) -> IntegrationResult:
    """Install or uninstall ecc's command hooks in one Claude-shaped JSON file.

    ``root``: the project of a project-scope edit (see :func:`edit_target`), else None.
    """
    real = edit_target(path, root)
    data, original = read_json(real, what)
    if action == "install":
        updated = add_command_hooks(data, harness, entries)
    elif action == "uninstall":
        updated = remove_command_hooks(data, harness)
    else:
        raise EccError(f"unknown integration action {action!r}")
    if updated is data or updated == data:
        return IntegrationResult(message=f"{path}: already up to date")
    try:
        return _write_json_edit(real, path, what, updated, original, dry_run, action, root)
    except CommentsWouldBeLost:
        if action != "uninstall":
            raise
        # the emptied containers sit next to a comment of the user's: keep them, empty
        kept = remove_command_hooks(data, harness, prune=False)
        return _write_json_edit(real, path, what, kept, original, dry_run, action, root)


def _write_json_edit(
    real: Path,
    path: Path,
    what: str,
    updated: dict[str, Any],
    original: str | None,
    dry_run: bool,
    action: str,
    root: Path | None,
) -> IntegrationResult:
    return write_json(
        real,
        updated,
        original,
        dry_run,
        delete_if_empty=action == "uninstall",
        what=what,
        link=real != path,
        prune_to=root,
    )


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
    *,
    root: Path | None = None,
) -> IntegrationResult:
    """Add (``install``) or remove (``uninstall``) the server ``name`` in ``data[container]``.

    ``container`` is the harness's own key (``mcpServers``, ``mcp``). Everything else in the file
    is kept, comments included; an entry that already equals ``entry`` means nothing to do; a
    container emptied by the uninstall is removed, and a file left empty is deleted.
    """
    real = edit_target(path, root)
    data, original = read_json(real, what)
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
    try:
        result = _write_json_edit(real, path, what, updated, original, dry_run, action, root)
    except CommentsWouldBeLost:
        if action != "uninstall" or container in updated:
            raise
        updated[container] = {}  # emptied beside a comment of the user's: kept, empty
        result = _write_json_edit(real, path, what, updated, original, dry_run, action, root)
    result.location = path
    return result
