"""The files that switch ecc's guard on or off, and the shell commands that write files.

An agent that edits the hook settings of its own harness, ecc's OpenCode hook module or ecc's
configuration can remove the check on every later tool call (or set ``risk.enforce = false``),
so the heuristic scores a *write* to any of them as needing confirmation. The locations are the
ones the adapters install into (``ecc hooks install``) and the harnesses read hooks from:

* ecc: ``<repo>/.ecc/config.toml``, everything in the user config dir (``ECC_CONFIG_DIR``,
  default ``~/.config/ecc/``), the trust store ``<data dir>/trust/``, and ``ecc config set``,
  ``ecc hooks install|uninstall``, ``ecc trust`` run as commands;
* Claude Code: ``.claude/settings.json`` and ``.claude/settings.local.json`` (project and
  ``~``), ``managed-settings.json``;
* Codex: ``.codex/config.toml`` and ``.codex/hooks.json`` (project, ``~`` and ``$CODEX_HOME``);
* Gemini CLI: ``.gemini/settings.json`` (project and ``~``), ``/etc/gemini-cli/settings.json``;
* OpenCode: ``opencode.json``/``opencode.jsonc``, ``ecc-hooks.js``, the plugin directories
  ``.opencode/plugin(s)/`` and ``~/.config/opencode/plugin(s)/`` and scripts directly in
  ``.opencode/``.

Paths are matched by their last components, case-insensitively, so ``docs/config.toml.md`` or
``src/settings.json`` are not hook settings. Reading these files is not a write.

The heuristic adds +0.55 for such a write, which lands every one of them at
``require_confirmation`` or above under the default thresholds (edit 0.65, write 0.70, shell
0.75): Claude Code asks the user, the harnesses that cannot ask (Codex, Gemini CLI, OpenCode)
deny, and deleting the file (+0.40 irreversible) is a block. Not a block outright, so that a
user who asked the agent for a hook change can still approve it where the harness can ask.
"""

from __future__ import annotations

import os
import re

_ECC_COMMANDS = frozenset({("config", "set"), ("hooks", "install"), ("hooks", "uninstall")})
_WHOLE_OPERANDS = frozenset({"rm", "unlink", "shred", "truncate", "mv", "tee"})
_LAST_OPERAND = frozenset({"cp", "install", "ln", "rsync", "scp"})
_IN_PLACE = frozenset({"sed", "perl", "gsed"})
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".ts")
_TILDE = re.compile(r"^(?:~|\$home|\$\{home\})(?=/|$)")


def describe(path: str) -> str | None:
    """Which hook configuration ``path`` is (``"Claude Code hook settings"``…), or None."""
    lowered = path.strip("'\"").lower()
    parts = [part for part in re.split(r"[/\\]", lowered) if part and part != "."]
    if not parts:
        return None
    base, parent = parts[-1], parts[-2] if len(parts) > 1 else ""
    if parent == ".ecc" and base == "config.toml":
        return "ecc project config"
    if base == "ecc-hooks.js":
        return "ecc hook module"
    if parent == ".claude" and base in {"settings.json", "settings.local.json"}:
        return "Claude Code hook settings"
    if base == "managed-settings.json":
        return "Claude Code managed settings"
    if parent == ".codex" and base in {"config.toml", "hooks.json"}:
        return "Codex hook settings"
    if parent in {".gemini", "gemini-cli"} and base == "settings.json":
        return "Gemini CLI hook settings"
    if base in {"opencode.json", "opencode.jsonc"}:
        return "OpenCode config"
    if _opencode_plugin(parts):
        return "OpenCode plugin"
    if parts[:-1][-2:] == [".config", "ecc"]:
        return "ecc user config"
    return _under_configured_dirs(lowered, base)


def _opencode_plugin(parts: list[str]) -> bool:
    if len(parts) > 1 and parts[-2] == ".opencode" and parts[-1].endswith(_SCRIPT_SUFFIXES):
        return True
    for index in range(1, len(parts) - 1):
        if parts[index] in {"plugin", "plugins"}:
            owner = parts[index - 1]
            if owner == ".opencode" or (
                owner == "opencode" and index >= 2 and parts[index - 2] == ".config"
            ):
                return True
    return False


def _under_configured_dirs(lowered: str, base: str) -> str | None:
    """Absolute locations that environment variables move: ecc's own config dir and trust
    store, ``$CODEX_HOME`` and ``$XDG_CONFIG_HOME/opencode``."""
    home = os.path.expanduser("~").lower()
    target = _TILDE.sub(lambda _: home, lowered)
    if not os.path.isabs(target):
        return None
    target = os.path.normpath(target)
    if target.startswith(("/dev/", "/proc/")):  # 2>/dev/null: never config
        return None
    for label, directory, only in _configured_dirs():
        inside = target == directory or target.startswith(directory.rstrip(os.sep) + os.sep)
        if inside and (not only or base in only):
            return label
    return None


def _configured_dirs() -> list[tuple[str, str, frozenset[str]]]:
    from ecc.runtime import paths  # only for an absolute path written by a write-kind tool

    found: list[tuple[str, str, frozenset[str]]] = [
        ("ecc user config", str(paths.config_dir()), frozenset()),
        ("ecc trust store", str(paths.data_dir() / "trust"), frozenset()),
    ]
    codex = os.environ.get("CODEX_HOME")
    if codex:
        found.append(("Codex hook settings", codex, frozenset({"config.toml", "hooks.json"})))
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        found.append(("OpenCode plugin", os.path.join(xdg, "opencode"), frozenset()))
    return [(label, os.path.normpath(d).lower(), only) for label, d, only in found]


def ecc_command(words: list[str]) -> str | None:
    """``ecc config set``, ``ecc hooks install|uninstall`` or ``ecc trust`` (not ``--list``)
    when ``words`` (an argv, program first) is one of them, else None."""
    if not words or words[0].rsplit("/", 1)[-1] != "ecc":
        return None
    index = 1
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in {"-c", "--config"} else 1
    sub = words[index] if index < len(words) else ""
    action = words[index + 1] if index + 1 < len(words) else ""
    if sub == "trust" and "--list" not in words:
        return "ecc trust"
    if (sub, action) in _ECC_COMMANDS:
        return f"ecc {sub} {action}"
    return None


def written_operands(
    program: str, letters: set[str], longs: set[str], operands: list[str]
) -> list[str]:
    """The operands a command writes, deletes or moves (``tee``, ``sed -i``, ``cp``'s
    destination, ``rm``, ``mv``, ``dd of=``…); ``cp``'s sources and every other program's are
    reads."""
    if program == "dd":
        return [operand[3:] for operand in operands if operand.startswith("of=")]
    if program == "mv" and operands and operands[-1].endswith("/"):
        return [*operands, *_into(operands[-1], operands[:-1])]
    if program in _WHOLE_OPERANDS:
        return operands
    if program in _LAST_OPERAND:
        if operands[-1:] and operands[-1].endswith("/"):  # into a directory: keeps the names
            return _into(operands[-1], operands[:-1])
        return operands[-1:]
    if program in _IN_PLACE and ("i" in letters or "--in-place" in longs):
        return operands
    return []


def _into(directory: str, sources: list[str]) -> list[str]:
    return [directory + source.rstrip("/").rsplit("/", 1)[-1] for source in sources]
