"""Editing a TOML MCP config (Codex's ``config.toml``) so install then uninstall gives it back
byte for byte.

The edit is made on lines (:mod:`ecc.portability.tomltext`) and checked by parsing the result;
an entry the user wrote in another form (an inline table, dotted keys, sub-tables) is edited
with tomlkit instead, and anything that would not parse to the wanted document is refused.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.types import IntegrationResult
from ecc.portability.harnessfiles import (
    MCP_SERVER_NAME,
    edit_target,
    read_config_text,
    write_change,
)


def edit_mcp_toml(
    path: Path,
    what: str,
    table: str,
    entry: dict[str, Any],
    action: str,
    dry_run: bool,
    name: str = MCP_SERVER_NAME,
    *,
    root: Path | None = None,
) -> IntegrationResult:
    """The TOML twin of :func:`edit_mcp_json` (``[table.name]``): install then uninstall gives
    back the file byte for byte (:mod:`ecc.portability.tomltext`), comments, blank lines, line
    endings and a missing final newline included; a ``[table]`` the user wrote stays, one only
    ecc's entry implied goes with it. A file that does not parse is refused and left untouched.
    """
    import tomllib

    real = edit_target(path, root)
    try:
        original: str | None = read_config_text(real)
    except FileNotFoundError:
        original = None
    except OSError as exc:
        raise EccError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        before = tomllib.loads(original or "")
    except tomllib.TOMLDecodeError as exc:
        raise EccError(
            f"{what} {path} is not valid TOML ({exc}); fix or move it, nothing was changed"
        ) from None
    servers = before.get(table)
    if servers is not None and not isinstance(servers, dict):
        raise EccError(f'"{table}" in {what} {path} is not a table; nothing was changed')
    current = servers.get(name) if servers is not None else None
    wanted = copy.deepcopy(before)
    if action == "install":
        if current == entry:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        wanted.setdefault(table, {})[name] = entry
    elif action == "uninstall":
        if current is None:
            return IntegrationResult(message=f"{path}: already up to date", location=path)
        del wanted[table][name]
    else:
        raise EccError(f"unknown integration action {action!r}")
    new_text = _toml_text(original or "", (table, name), entry if action == "install" else None)
    if new_text is None or not _parses_to(new_text, wanted, table):
        new_text = _toml_text_rendered(original or "", table, name, entry, action)
        if new_text is None or not _parses_to(new_text, wanted, table):
            raise EccError(f"{what} {path} cannot be edited safely; nothing was changed")
    if action == "uninstall" and not new_text and real != path:
        new_text = "\n"  # a linked file is kept, never deleted
    result = write_change(real, original, new_text, dry_run, prune_to=root)
    result.location = path
    return result


def _toml_lines(entry: dict[str, Any]) -> list[str]:
    """``key = value`` lines of a table, a table value written inline."""
    import tomlkit

    lines = []
    for key, value in entry.items():
        if isinstance(value, dict):
            item = tomlkit.inline_table()
            item.update(value)
        else:
            item = tomlkit.item(value)
        lines.append(f"{tomlkit.key(key).as_string()} = {item.as_string()}")
    return lines


def _parses_to(text: str, wanted: dict[str, Any], table: str) -> bool:
    """Whether ``text`` is TOML holding ``wanted`` (an emptied ``table`` there or not)."""
    import tomllib

    try:
        got = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    if wanted.get(table) == {}:
        return got in (wanted, {k: v for k, v in wanted.items() if k != table})
    return got == wanted


def _toml_text(original: str, path: tuple[str, str], entry: dict[str, Any] | None) -> str | None:
    """``original`` without the table ``path``, then with it as ``entry`` (None: left out);
    None when the table is not written as ecc writes it."""
    import tomlkit

    from ecc.portability import tomltext

    kinds = tomltext.classify(original.splitlines(keepends=True))
    text: str | None = original
    if (tomltext.HEADER, path) in kinds:
        text = tomltext.remove_table(original, path)
    if text is None or entry is None:
        return text
    header = "[" + ".".join(tomlkit.key(part).as_string() for part in path) + "]"
    return tomltext.add_table(text, path, header, _toml_lines(entry))


def _toml_text_rendered(
    original: str, table: str, name: str, entry: dict[str, Any], action: str
) -> str | None:
    """The edit made by tomlkit on the parsed document, for a file whose entry is not written
    as ecc writes it (an inline table, dotted keys, sub-tables); None when tomlkit cannot."""
    try:
        return _tomlkit_edit(original, table, name, entry, action)
    except Exception:  # tomlkit's own errors and its KeyError/TypeError on unusual documents
        return None


def _tomlkit_edit(original: str, table: str, name: str, entry: dict[str, Any], action: str) -> str:
    import tomlkit

    document = tomlkit.parse(original)
    servers = document.setdefault(table, tomlkit.table(is_super_table=True))
    if action == "install":
        server = tomlkit.table()
        for line_key, value in entry.items():
            if isinstance(value, dict):
                inline = tomlkit.inline_table()
                inline.update(value)
                server[line_key] = inline
            else:
                server[line_key] = value
        servers[name] = server
    else:
        del servers[name]
        if not servers:
            del document[table]
    return tomlkit.dumps(document)
