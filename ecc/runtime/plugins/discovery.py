"""Finding plugins: the entry points of ecc's groups, and loading one of them.

Discovery is stevedore's; its answer is kept in the start-up cache (:mod:`ecc.runtime.startcache`)
so a warm process finds its plugins without importing stevedore or ``importlib.metadata``.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # without importing typing (a memory search imports this module)
if TYPE_CHECKING:
    from typing import Any


def allowed_names(environ: dict[str, str] | os._Environ[str] | None = None) -> set[str] | None:
    """The names ``ECC_PLUGINS`` allows, or None when it is not set (all allowed)."""
    environ = os.environ if environ is None else environ
    raw = environ.get("ECC_PLUGINS")
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def import_object(value: str) -> Any:
    """Load an entry point's ``module:attr.path`` (extras in brackets are ignored)."""
    import importlib

    module_name, _, attributes = value.split("[")[0].strip().partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        obj = getattr(obj, attribute)
    return obj


def discovery_key() -> str:
    """What the entry-point list depends on: the interpreter and each sys.path entry's mtime."""
    parts: list[Any] = [sys.executable, sys.prefix, __import__("ecc").__version__]
    # sys.path[0] is the script's directory or the working directory: it holds no installed
    # distributions, and its mtime moves with every file created there.
    for entry in sys.path[1:]:
        try:
            parts.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            parts.append((entry, None))
    return json.dumps(parts)


def discover(key: str | None = None) -> dict[str, list[tuple[str, str]]]:
    """Every entry point of the ecc groups as ``(name, "module:attr")``, in a stable order.

    Discovery is stevedore's (its own scan cache included); the resulting list is kept in the
    start-up cache keyed by :func:`discovery_key`, so a warm process
    lists plugins without importing stevedore or ``importlib.metadata`` at all. Installing or
    removing a distribution changes a ``sys.path`` directory's mtime and so the key (pass
    ``key`` when the caller has computed it already).
    """
    from ecc.contract.hookspecs import GROUPS  # the specs module: not for discovery_key()
    from ecc.runtime import startcache

    key = key if key is not None else discovery_key()
    cached = startcache.read("plugins", key)
    if cached is not None:
        try:
            found = {group: [tuple(p) for p in eps] for group, eps in cached["groups"].items()}
            if found.keys() >= GROUPS.keys():  # an older ecc may have scanned fewer groups
                return found
        except (KeyError, TypeError, AttributeError):
            pass
    from stevedore import NamedExtensionManager

    groups: dict[str, list[tuple[str, str]]] = {}
    for group in GROUPS:
        manager: Any = NamedExtensionManager(group, names=[], on_missing_entrypoints_callback=None)
        seen: dict[str, str] = {}
        for ep in manager.list_entry_points():
            seen.setdefault(ep.name, ep.value)  # first on sys.path wins, as for imports
        groups[group] = sorted(seen.items())
    startcache.write("plugins", key, {"groups": groups})
    return groups
