"""What ``ecc hook`` answers when its own configuration does not load.

A TOML syntax error or an unknown key in the user or project file makes the validated config
unavailable, and with it ``risk.fail_closed``. A broken config must never weaken a decision, so
the fail-closed and enforce settings are then read on their own, from every layer that can
still be read (user file, project file, ``ECC_CONFIG``, ``ECC__RISK__*`` variables, ``ecc -c``):

* any layer with ``risk.fail_closed = true`` denies (the strictest plausible reading, whatever
  the layer order would have made of it); a file that does not parse is searched line by line
  for ``fail_closed = true`` under ``[risk]``;
* a file that does not parse at all may have held anything, so the settings of the last config
  that loaded for the same files stand in for it (:func:`remember` keeps them in
  ``<state dir>/failsafe/``, 0600, rewritten only when they change);
* when enforcement was on (by either source) and ``fail_closed`` cannot be known, deny.

Otherwise the call is allowed, as before, and the error logged. Imports only ``os`` and
``json`` until a config fails: :func:`remember` runs on every hook call.
"""

from __future__ import annotations

import json
import os

from ecc.runtime import paths

TYPE_CHECKING = False  # typing stays unimported on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

UNKNOWN = "unknown"  # a value that is not a boolean, or a file that could not be read
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})  # what the config model reads as true
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
SETTINGS = ("enforce", "fail_closed")


# -- the last settings that loaded -----------------------------------------------------------


def _key(cwd: str | Path | None) -> str:
    """Which config files the settings were loaded from (not their content)."""
    project = paths.project_config_location(cwd)
    user = paths.user_config_location()
    return json.dumps([user, str(project), os.environ.get("ECC_CONFIG")])


def _location(key: str) -> str:
    name = f"{paths.sha256_hex(key)[:24]}.json"
    return os.path.join(paths.directory("state"), "failsafe", name)


def remember(risk: Any, cwd: str | Path | None = None) -> None:
    """Keep ``risk.enforce`` and ``risk.fail_closed`` of a config that loaded; never raises."""
    try:
        key = _key(cwd)
        entry = {"key": key, "enforce": bool(risk.enforce), "fail_closed": bool(risk.fail_closed)}
        target = _location(key)
        if _read(target) == entry:
            return
        folder, name = os.path.split(target)
        paths.ensure_private_dir(folder)
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, json.dumps(entry).encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except Exception:  # a read-only state dir costs only this fallback
        pass


def _read(target: str) -> dict[str, Any] | None:
    try:
        with open(target, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def recall(cwd: str | Path | None = None) -> dict[str, bool] | None:
    """The settings :func:`remember` kept for the same config files, or None."""
    key = _key(cwd)
    data = _read(_location(key))
    if data is None or data.get("key") != key:
        return None
    return {name: data.get(name) is True for name in SETTINGS}


# -- the layers that can still be read -------------------------------------------------------


class Layer:
    """One source of ``[risk]`` settings: its ``enforce`` and ``fail_closed`` as True, False,
    None (not set) or :data:`UNKNOWN`, and whether it failed to parse."""

    __slots__ = ("broken", "label", "values")

    def __init__(self, label: str, values: dict[str, Any], broken: bool = False) -> None:
        self.label = label
        self.values = values
        self.broken = broken


def _boolean(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return UNKNOWN


def _from_table(table: Any) -> dict[str, Any]:
    risk = table.get("risk") if isinstance(table, dict) else None
    if risk is None:
        return {}
    if not isinstance(risk, dict):
        return dict.fromkeys(SETTINGS, UNKNOWN)
    return {name: _boolean(risk.get(name)) for name in SETTINGS}


def _salvage(text: str) -> dict[str, Any]:
    """``enforce``/``fail_closed = true`` lines under ``[risk]`` (or dotted) of a broken file."""
    import re

    found: dict[str, Any] = {}
    table = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            table = stripped.strip("[] \t").split("]")[0].strip().strip("\"'")
            continue
        match = re.match(r"(risk\s*\.\s*)?(enforce|fail_closed)\s*=\s*true\b", stripped)
        if match and (match.group(1) or table == "risk"):
            found[match.group(2)] = True
    return found


def _file_layer(label: str, path: Path) -> Layer:
    import tomllib

    try:
        raw = path.read_bytes()
    except OSError:
        return Layer(label, {}, broken=True)
    try:
        return Layer(label, _from_table(tomllib.loads(raw.decode("utf-8"))))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return Layer(label, _salvage(raw.decode("utf-8", "replace")), broken=True)


def _value(text: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def layers(cwd: str | Path | None = None) -> list[Layer]:
    """Every source of the two settings, each read on its own: one broken file hides nothing
    of the others."""
    from pathlib import Path

    found: list[Layer] = []
    user = paths.user_config_file()
    if user.is_file():
        found.append(_file_layer(f"the user file {user}", user))
    project = paths.project_config_file(cwd)
    if project is not None and project.is_file():
        found.append(_file_layer(f"the project file {project}", project))
    explicit = os.environ.get("ECC_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        found.append(_file_layer(f"ECC_CONFIG {path}", path))
    env = {
        name: _boolean(_value(os.environ[f"ECC__RISK__{name.upper()}"]))
        for name in SETTINGS
        if f"ECC__RISK__{name.upper()}" in os.environ
    }
    if env:
        found.append(Layer("ECC__RISK__* variables", env))
    from ecc.runtime.config import overrides

    flags: dict[str, Any] = {}
    for pair in overrides.pairs():
        key, _, text = pair.partition("=")
        if key.strip() in {f"risk.{name}" for name in SETTINGS}:
            flags[key.strip()[len("risk.") :]] = _boolean(_value(text))
    if flags:
        found.append(Layer("ecc -c", flags))
    return found


# -- the decision ----------------------------------------------------------------------------


def verdict(cwd: str | Path | None = None) -> tuple[bool, str]:
    """(deny, why) for a hook call whose config failed to load."""
    sources = layers(cwd)
    for layer in sources:
        if layer.values.get("fail_closed") is True:
            return True, f"risk.fail_closed is set in {layer.label}"
    broken = [layer for layer in sources if layer.broken]
    last = recall(cwd) if broken else None
    if last is not None and last["fail_closed"]:
        return True, "risk.fail_closed was set in the last config that loaded"
    enforced = [layer.label for layer in sources if layer.values.get("enforce") is True]
    if last is not None and last["enforce"]:
        enforced.append("the last config that loaded")
    unknowable = [layer.label for layer in broken]
    unknowable += [other.label for other in sources if other.values.get("fail_closed") == UNKNOWN]
    if enforced and unknowable:
        return True, (
            f"risk.enforce is on ({enforced[0]}) and risk.fail_closed cannot be read from "
            f"{unknowable[0]}"
        )
    return False, "risk.fail_closed is not set where it can be read"


def summary(error: BaseException) -> str:
    """The config error in one line for the harness: no traceback, no rejected value."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text.split(" (got ", 1)[0][:300]
