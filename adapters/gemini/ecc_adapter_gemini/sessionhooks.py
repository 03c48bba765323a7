"""ecc's ``BeforeTool`` hook applied to one managed session's Gemini CLI process.

Gemini CLI has no flag that adds settings, and its system settings file
(``GEMINI_CLI_SYSTEM_SETTINGS_PATH``) is only read when it and every directory above it are owned
by root and writable by nobody else, so an ordinary user cannot point it at a file of a session.
What it does honour per process is ``GEMINI_CLI_HOME``: the home whose ``.gemini/`` holds the
user settings, credentials, chats and extensions. The session gets a private home (in
``SessionEnforcement.directory``) whose ``.gemini/settings.json`` is the user's own settings with
ecc's hook appended and ``hooksConfig.enabled`` true; every other entry of the user's
``~/.gemini`` (credentials, chats under ``tmp/``, extensions, trusted folders...) is a symlink
to the real one, so the user's setup keeps working. State Gemini creates that did not exist yet
stays in the private home, which lives as long as the session (its resumes reuse it).

In a trusted folder (``GEMINI_CLI_TRUST_WORKSPACE=true`` in the user's environment, a trusted
folders entry, folder trust off; ``--skip-trust`` alone takes effect only after the settings
were loaded) Gemini merges the workspace's ``.gemini/settings.json`` (the repository's,
untrusted) *over* the user's. ``BeforeTool`` lists are concatenated and ``hooksConfig.disabled``
names hooks (ours has a random name), but a workspace ``hooks`` that is not an object replaces
the whole table and ``hooksConfig.enabled`` other than true turns hooks off. Only system
settings rank above the workspace, so the adapter refuses to start a session whose worktree (or
whose operator's system settings) would switch ecc's hook off that way, whether or not the
folder ends up trusted, rather than run it unenforced.

The hook's ``env`` names the ``ECC_*`` variables it needs as ``${NAME:-}``, which Gemini expands
from its own environment when it loads the settings: a workspace's
``security.environmentVariableRedaction`` (or the strict redaction Gemini applies on GitHub
Actions) cannot keep the session id or the policy directory from the hook.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from ecc.adapterkit.sessionhooks import hooks_table, write_settings
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext

HOME_ENV = "GEMINI_CLI_HOME"
SYSTEM_SETTINGS_ENV = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
PRIVATE_HOME = "gemini-home"
SETTINGS = "settings.json"
# Set by the runner for every session: the hook reads them.
SESSION_VARIABLES = ("ECC_SESSION_ID", "ECC_POLICY_DIR", "ECC_SESSION_HOOK", "ECC_HARNESS")
# Where ecc keeps its files; passed on when the runner's environment sets them.
LOCATION_VARIABLES = (
    "ECC_CONFIG",
    "ECC_CONFIG_DIR",
    "ECC_STATE_DIR",
    "ECC_DATA_DIR",
    "ECC_CACHE_DIR",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
)


def session_env(launch: LaunchContext) -> dict[str, str]:
    """``{"GEMINI_CLI_HOME": private home}`` with ecc's hook in its settings, or ``{}`` when the
    session has no enforcement. Raises :class:`EccError` when the worktree's or the system's
    settings would turn the hook off."""
    enforcement = launch.enforcement
    if enforcement is None:
        return {}
    real_home = Path(os.environ.get(HOME_ENV) or Path.home())
    for path, what in (
        (Path(launch.working_dir) / ".gemini" / SETTINGS, "the session's worktree"),
        (system_settings_path(), "the system settings"),
    ):
        reason = hooks_switched_off(read_settings(path, what))
        if reason:
            raise EccError(
                f"{path} ({what}) {reason}: it would switch off ecc's hook, so the gemini "
                "session cannot be enforced; nothing was started"
            )
    user_settings = read_settings(real_home / ".gemini" / SETTINGS, "the user settings")
    home = Path(enforcement.directory) / PRIVATE_HOME
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    link_entries(real_home, home)
    entry = hooks_table(enforcement, "BeforeTool", matcher=".*", milliseconds=True)["BeforeTool"]
    for hook in entry[0]["hooks"]:
        hook["name"] = f"ecc-session-{secrets.token_hex(8)}"  # hooksConfig.disabled cannot guess
        hook["env"] = hook_env()
    written = write_settings(enforcement, "gemini-settings.json", with_hook(user_settings, entry))
    os.replace(written, gemini_dir / SETTINGS)  # whole or not at all
    return {HOME_ENV: str(home)}


def system_settings_path() -> Path:
    """Where Gemini CLI reads its system settings (it ranks above the workspace's)."""
    override = os.environ.get(SYSTEM_SETTINGS_ENV)
    if override:
        return Path(override)
    if sys.platform == "darwin":
        return Path("/Library/Application Support/GeminiCli/settings.json")
    return Path("/etc/gemini-cli/settings.json")


def hook_env() -> dict[str, str]:
    """What the hook's process gets whatever Gemini's environment redaction keeps: references
    Gemini expands when it loads the settings, never the values (no secret lands in the file)."""
    names = [*SESSION_VARIABLES, *(n for n in LOCATION_VARIABLES if os.environ.get(n))]
    return {name: "${" + name + ":-}" for name in names}  # unset: empty, as ecc reads unset


def with_hook(user_settings: dict[str, Any], entry: list[dict[str, Any]]) -> dict[str, Any]:
    """The user's settings with ``entry`` appended to ``hooks.BeforeTool`` and hooks enabled."""
    settings = dict(user_settings)
    hooks = settings.get("hooks")
    hooks = dict(hooks) if isinstance(hooks, dict) else {}
    before = hooks.get("BeforeTool")
    hooks["BeforeTool"] = [*(before if isinstance(before, list) else []), *entry]
    settings["hooks"] = hooks
    config = settings.get("hooksConfig")
    settings["hooksConfig"] = {**(config if isinstance(config, dict) else {}), "enabled": True}
    return settings


def hooks_switched_off(settings: dict[str, Any]) -> str | None:
    """Why settings merged over the user's would drop or disable ecc's hook, or None.

    Gemini merges objects key by key and concatenates ``BeforeTool`` lists, but replaces
    anything else: a ``hooks`` that is not an object replaces the user's table, and
    ``hooksConfig.enabled`` is a plain value (``"$VAR"`` strings are expanded, so only a literal
    true is known to keep hooks on)."""
    if "hooks" in settings and not isinstance(settings["hooks"], dict):
        return "sets hooks to something other than an object"
    config = settings.get("hooksConfig", {})
    if not isinstance(config, dict):
        return "sets hooksConfig to something other than an object"
    if "enabled" in config and config["enabled"] is not True:
        return f"sets hooksConfig.enabled to {json.dumps(config['enabled'])}"
    return None


def read_settings(path: Path, what: str) -> dict[str, Any]:
    """A Gemini settings file (JSON with comments) as a dict; ``{}`` when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise EccError(f"cannot read {path} ({what}): {exc.strerror}") from None
    try:
        data = json.loads(strip_comments(text)) if text.strip() else {}
    except ValueError as exc:
        raise EccError(f"{path} ({what}) is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise EccError(f"{path} ({what}) is not a JSON object")
    return data


def strip_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments outside strings (what Gemini strips)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(char)
            i += 1
    return "".join(out)


def link_entries(real_home: Path, home: Path) -> None:
    """Symlink every entry of the user's ``.gemini`` but the settings (and ``~/.env``, which
    Gemini reads from its home) into the private ``home``; stale links are replaced."""
    real = real_home / ".gemini"
    pairs = [(real_home / ".env", home / ".env")]
    try:
        names = sorted(os.listdir(real))
    except OSError:
        names = []
    pairs += [(real / name, home / ".gemini" / name) for name in names if name != SETTINGS]
    for target, link in pairs:
        if not os.path.lexists(target):
            continue
        if link.is_symlink():
            if os.readlink(link) == str(target):
                continue
            link.unlink()
        elif os.path.lexists(link):
            continue  # created by Gemini in an earlier run of this session: keep it
        link.symlink_to(target)
