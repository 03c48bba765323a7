"""A memo, per login, of the directories platformdirs gave ecc, for processes that must start fast.

A harness runs ``ecc hook`` before every tool call. Inside ``ecc run`` it is handed ``ECC_*_DIR``
(:func:`ecc.runtime.paths.pinned_environment`); a hook the user installed for their own harness
is not, and importing platformdirs (with pathlib, tempfile and shutil) to find the directories
is about 15 ms of a 40 ms call. So the first process that asks platformdirs leaves its answers
here, and later ones read them back instead of importing it.

The memo is platformdirs' own answer, never a rule of ecc's, and it is used only while every
input platformdirs reads is what it was: the user, the platform, ``HOME``, every ``XDG_*_HOME``
variable, and platformdirs' module file (an upgrade could change its rules). It lives in
``$XDG_RUNTIME_DIR`` (the user's private directory of this login, emptied at logout), and only
when that directory is the user's own and closed to others: the memo says where ecc reads its
policy and writes its records. Without such a directory, or with a memo that is missing, stale
or unreadable, the caller asks platformdirs, and the answer is written for the next process.
"""

from __future__ import annotations

import json
import os
import sys

NAME = "ecc-directories.json"
FORMAT = 1  # bumped when ecc asks platformdirs differently (app name, arguments)


def _runtime_dir() -> str | None:
    """``$XDG_RUNTIME_DIR`` when it is an absolute directory of this user that no one else may
    enter or write to; else None (and no memo is read or written)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if sys.platform == "win32" or not os.path.isabs(runtime):
        return None
    try:
        info = os.stat(runtime)
    except (OSError, ValueError):
        return None
    if not os.path.isdir(runtime) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return runtime


def _inputs() -> list[object]:
    """Everything platformdirs' user directories depend on, as JSON would give it back."""
    xdg = sorted(
        [k, v] for k, v in os.environ.items() if k.startswith("XDG_") and k.endswith("_HOME")
    )
    return [FORMAT, sys.platform, os.getuid(), os.environ.get("HOME"), xdg]


def _module_stamp(location: str) -> list[int]:
    info = os.stat(location)
    return [info.st_mtime_ns, info.st_size, info.st_ino]


def read(kinds: tuple[str, ...]) -> dict[str, str] | None:
    """The memo's directories, when it exists and its inputs are today's; else None."""
    runtime = _runtime_dir()
    if runtime is None:
        return None
    try:
        with open(os.path.join(runtime, NAME), "rb") as handle:
            memo = json.loads(handle.read(65536))
        if memo["inputs"] != _inputs():
            return None
        module, stamp = memo["platformdirs"]
        if _module_stamp(module) != stamp:
            return None
        found = memo["directories"]
        if all(isinstance(found.get(kind), str) and os.path.isabs(found[kind]) for kind in kinds):
            return {kind: found[kind] for kind in kinds}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def write(found: dict[str, str]) -> None:
    """Leave ``found`` (platformdirs' answers, platformdirs imported) for the next process.

    Best effort: a memo that cannot be written costs the next process the import, nothing else.
    The file is replaced whole, so a reader sees the old memo or the new one.
    """
    runtime = _runtime_dir()
    platformdirs = sys.modules.get("platformdirs")
    if runtime is None or platformdirs is None or not platformdirs.__file__:
        return
    target = os.path.join(runtime, NAME)
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        module = os.path.realpath(platformdirs.__file__)
        memo = {
            "inputs": _inputs(),
            "platformdirs": [module, _module_stamp(module)],
            "directories": found,
        }
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        descriptor = os.open(temporary, flags, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(memo))
        os.replace(temporary, target)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
