"""What a hot path needs from a plugin load, recorded once from pluggy's own registration.

``ecc hook`` calls three hooks on every tool call and ``ecc memory search`` calls one: building
a full plugin set for them (stevedore, every adapter package, pydantic for some) costs more than
their work. So the first time, the set is built as usual and pluggy validates and orders it;
then what pluggy worked out is written to the start-up cache (:mod:`ecc.runtime.startcache`):

* ``hook``: for the hooks of a hot path, which module of which plugin implements them (in
  pluggy's order), and which plugins declare which harness. A warm start imports just those
  modules (an adapter's ``integration`` module without its package) and calls them in pluggy's
  recorded call order without pluggy (:mod:`ecc.runtime.plugins.direct`), or, when pluggy must
  call them (a wrapper), registers them in a fresh manager. A module whose file changed since
  (its mtime and size) makes the record a miss.
* ``sole``: for a firstresult hook that one plugin answers alone (the memory backend), the
  attribute, the argument names pluggy passes and whether it is a plain implementation. A warm
  start calls that function itself, exactly as pluggy's call of one implementation does.

Every entry is keyed by what it was computed from (installed distributions, ``ECC_PLUGINS``,
the validated config, the implementing module's file), so anything that could change pluggy's
answer misses and takes the full path again.
"""

from __future__ import annotations

import json
import os
import sys

from ecc.runtime import startcache
from ecc.runtime.plugins.discovery import discovery_key

TYPE_CHECKING = False  # typing stays unimported on the hot paths
if TYPE_CHECKING:
    from typing import Any

    from ecc.runtime.plugins.loader import PluginSet

FORMAT = 4


def _file_stamp(function: Any) -> list[Any] | None:
    """The file defining ``function`` and its identity, or None for a function without one."""
    module = sys.modules.get(getattr(function, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    if not file:
        return None
    try:
        st = os.stat(file)
    except OSError:
        return None
    return [file, st.st_mtime_ns, st.st_size]


def hot_key(config: Any, hooks: tuple[str, ...]) -> str:
    """What a hot path's record depends on: the installed plugins, ``ECC_PLUGINS``, the hooks
    and the validated configuration (``config`` a ``ConfigView``, or None)."""
    settings = config.to_json() if config is not None else None
    return json.dumps([FORMAT, discovery_key(), os.environ.get("ECC_PLUGINS"), hooks, settings])


def read_hot(config: Any, hooks: tuple[str, ...]) -> dict[str, Any] | None:
    """The recorded modules and harness owners for ``hooks``, or None when not recorded or
    when a recorded module's file changed since (the full path then records it again)."""
    data = startcache.read("hook", hot_key(config, hooks))
    if data is None:
        return None
    for entry in data.get("modules", ()):
        stamp = entry.get("stamp")
        if stamp is None:
            continue
        try:
            st = os.stat(entry["file"])
        except OSError:
            return None
        if [st.st_mtime_ns, st.st_size] != stamp:
            return None
    return data


def record_hot(
    plugin_set: PluginSet, config: Any, hooks: tuple[str, ...], harness_hooks: frozenset[str]
) -> dict[str, Any]:
    """Record which modules implement ``hooks`` in ``plugin_set`` (loaded for ``config``);
    ``harness_hooks`` are the loader's harness hooks (passed in: this module never imports it)."""
    pm = plugin_set.pm_for(hooks)
    modules: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for hook_name in hooks:
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            module_name = impl.function.__module__
            module = sys.modules.get(module_name)
            key = (impl.plugin_name, module_name)
            if key in seen:
                seen[key]["hooks"].append(hook_name)
                continue
            if module is None or not getattr(module, "__file__", None):
                continue
            stamp = _file_stamp(impl.function)
            seen[key] = {
                "plugin": impl.plugin_name,
                "module": module_name,
                "file": module.__file__,
                "stamp": stamp[1:] if stamp is not None else None,
                "hooks": [hook_name],  # a module of harness hooks only is loaded for its harness
            }
            modules.append(seen[key])
    data = {"modules": modules, "harnesses": plugin_set.harness_owners()}
    calls = _call_order(pm, hooks, seen)
    if calls is not None:
        data["calls"] = calls
        data["harness_hooks"] = sorted(harness_hooks.intersection(hooks))
    startcache.write("hook", hot_key(config, hooks), data)
    return data


def _call_order(
    pm: Any, hooks: tuple[str, ...], modules: dict[tuple[str, str], dict[str, Any]]
) -> dict[str, Any] | None:
    """For each of ``hooks``: whether it is ``firstresult`` and its implementations in pluggy's
    call order, as (plugin, module, function name, argument names), so that a warm start can
    call them itself (:mod:`ecc.runtime.plugins.direct`); None when pluggy must call them (a
    wrapper, a spec with default arguments, an implementation that is not a module function)."""
    calls: dict[str, Any] = {}
    for hook_name in hooks:
        caller = getattr(pm.hook, hook_name)
        spec = caller.spec
        if spec is None or getattr(spec, "kwargdefaults", None) or spec.opts.get("historic"):
            return None
        impls = []
        for impl in reversed(caller.get_hookimpls()):
            function = impl.function
            module_name = getattr(function, "__module__", None) or ""
            module = sys.modules.get(module_name)
            attribute = getattr(function, "__name__", "")
            if (
                impl.wrapper
                or impl.hookwrapper
                or module is None
                or getattr(module, attribute, None) is not function
                or (impl.plugin_name, module_name) not in modules
                or modules[(impl.plugin_name, module_name)]["stamp"] is None
            ):
                return None
            impls.append([impl.plugin_name, module_name, attribute, list(impl.argnames)])
        calls[hook_name] = {"firstresult": bool(spec.opts.get("firstresult")), "impls": impls}
    return calls


def needed_modules(
    recorded: dict[str, Any], harness: str | None, harness_hooks: frozenset[str]
) -> list[dict[str, Any]]:
    """The recorded modules a start for ``harness`` needs (every one when it is None): a module
    of harness hooks only, of a plugin that does not declare ``harness``, is never called."""
    owners = set(recorded["harnesses"].get(harness, ())) if harness is not None else None
    return [
        entry
        for entry in recorded["modules"]
        if owners is None
        or entry["plugin"] in owners
        or not harness_hooks.issuperset(entry["hooks"])
    ]


def load_module(name: str, file: str) -> Any:
    """Import module ``name`` from ``file`` without importing its parent package first."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    # importlib.util's own two functions, from the interpreter's frozen bootstrap modules that
    # importlib re-exports: without importing importlib.util (~1.5 ms of every ecc hook), nor
    # importlib itself, which brings warnings
    try:
        from _frozen_importlib import module_from_spec
        from _frozen_importlib_external import spec_from_file_location
    except ImportError:  # an interpreter without them
        from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {name} from {file}")
    module = module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


# -- one plugin's sole implementation ----------------------------------------------------------


def _sole_key(group: str, name: str, value: str, hook: str, installed: str) -> str:
    return json.dumps([FORMAT, installed, group, name, value, hook])


def read_sole(
    group: str, name: str, value: str, hook: str, installed: str
) -> dict[str, Any] | None:
    """The recorded plain implementation of ``hook`` by plugin ``name``, if still current
    (``installed``: the :func:`~ecc.runtime.plugins.discovery.discovery_key` of the process)."""
    data = startcache.read("sole", _sole_key(group, name, value, hook, installed))
    if data is None:
        return None
    stamp, argnames = data.get("stamp"), data.get("argnames")
    if not isinstance(stamp, list) or len(stamp) != 3 or not isinstance(data.get("attribute"), str):
        return None  # a damaged record: pluggy is asked again
    if not isinstance(argnames, list) or not all(isinstance(arg, str) for arg in argnames):
        return None
    try:
        st = os.stat(stamp[0])
    except (OSError, TypeError, IndexError):
        return None
    return data if [stamp[0], st.st_mtime_ns, st.st_size] == stamp else None


def record_sole(
    group: str, name: str, value: str, hook: str, installed: str, caller: Any, plugin: Any
) -> None:
    """Record ``caller``'s implementation when pluggy calls exactly one plain function for it."""
    impls = caller.get_hookimpls()
    spec = caller.spec
    if len(impls) != 1 or spec is None or not spec.opts.get("firstresult"):
        return
    impl = impls[0]
    if impl.wrapper or impl.hookwrapper or impl.plugin is not plugin:
        return
    attribute = next(
        (attr for attr in dir(plugin) if getattr(plugin, attr, None) == impl.function), None
    )
    stamp = _file_stamp(impl.function)
    if attribute is None or stamp is None:
        return
    data = {"attribute": attribute, "argnames": list(impl.argnames), "stamp": stamp}
    startcache.write("sole", _sole_key(group, name, value, hook, installed), data)
