"""Discovery (stevedore) and registration (pluggy) of every plugin.

Built-ins, first-party adapters and third-party packages are all found the same way, through the
entry-point groups below, and registered in one ``pluggy.PluginManager("ecc")``. The core never
imports a plugin module by name.

A plugin that cannot be imported, or whose hook implementations do not match ``ecc.contract.hookspecs``,
is left out with a warning on stderr naming it and its entry point; ecc keeps working.

Groups load lazily in the process's :class:`PluginSet`: calling a hook through
``get_plugins().hook`` first loads the groups of that hook's family (:data:`HOOK_GROUPS`) and
every group before them in :data:`GROUPS` order, so ``ecc run -d`` imports adapters and
executors but no notifier, scorer or memory backend. A plugin may implement only hooks of its
own group's family (else it is refused like one with an unknown hook), and groups always
register in the same order, so every hook answers exactly as if every group had been loaded
first. ``PluginSet.pm`` (raw access) loads every group.

``ECC_PLUGINS`` restricts loading to a comma-separated list of plugin (entry-point) names;
set and empty, it loads none.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # without importing typing (a memory search imports this module)
if TYPE_CHECKING:
    from typing import Any

    import pluggy

    from ecc.runtime.config.model import Config

# Groups load (and register) in this order, always as a prefix of it: a command that needs
# executors loads adapters and executors, one that notifies adds notifiers. The most used come
# first, so ``ecc run -d`` (adapters, executors) loads nothing else.
GROUPS: dict[str, str] = {
    "ecc.adapters": "adapter",
    "ecc.executors": "executor",
    "ecc.notifiers": "notifier",
    "ecc.risk_scorers": "risk scorer",
    "ecc.memory_backends": "memory backend",
}

_ADAPTER_HOOKS = (
    "ecc_harnesses",
    "ecc_build_command",
    "ecc_session_env",
    "ecc_translate_profile",
    "ecc_resume_command",
    "ecc_detect_harness",
    "ecc_parse_output_line",
    "ecc_install_integration",
    "ecc_parse_hook_payload",
    "ecc_hook_response",
)

# The family of each hook: the entry-point groups whose plugins may implement it.
HOOK_GROUPS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_ADAPTER_HOOKS, ("ecc.adapters",)),
    "ecc_score_tool_call": ("ecc.risk_scorers",),
    "ecc_notify": ("ecc.notifiers",),
    "ecc_memory_backend": ("ecc.memory_backends",),
    "ecc_executor": ("ecc.executors",),
    "ecc_register_commands": tuple(GROUPS),  # any plugin may add commands
}


class PluginRecord:
    """What ``ecc plugins`` reports about one entry point.

    A plain class: defining a dataclass (and importing ``dataclasses``) would cost every hot
    path that imports this module more than a millisecond.
    """

    __slots__ = (
        "distribution", "enabled", "entry_point", "error", "group", "hooks", "loaded", "name",
        "version",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        group: str,
        entry_point: str,
        distribution: str | None = None,
        version: str | None = None,
        hooks: list[str] | None = None,
        enabled: bool = True,
        loaded: bool = False,
        error: str | None = None,
    ) -> None:
        self.name = name
        self.group = group
        self.entry_point = entry_point
        self.distribution = distribution
        self.version = version
        self.hooks: list[str] = hooks if hooks is not None else []
        self.enabled = enabled
        self.loaded = loaded
        self.error = error

    def __repr__(self) -> str:
        return f"PluginRecord({self.as_dict()!r})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "group": self.group,
            "entry_point": self.entry_point,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": self.hooks,
            "enabled": self.enabled,
            "loaded": self.loaded,
            "error": self.error,
        }


_warned: set[str] = set()


def warn(message: str) -> None:
    """Print a plugin warning to stderr once per process."""
    if message not in _warned:
        _warned.add(message)
        print(f"Warning: {message}", file=sys.stderr)


def allowed_names(environ: dict[str, str] | os._Environ[str] | None = None) -> set[str] | None:
    """The names ``ECC_PLUGINS`` allows, or None when it is not set (all allowed)."""
    environ = os.environ if environ is None else environ
    raw = environ.get("ECC_PLUGINS")
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _selected_by_config(group: str, name: str, config: Config | None) -> bool:
    if config is None:
        return True
    if group == "ecc.risk_scorers":
        return name not in config.risk.disabled_scorers
    if group == "ecc.notifiers":
        return name in config.notifications.notifiers
    if group == "ecc.memory_backends":
        return name == config.memory.backend
    # ecc.executors: all installed ones load (their modules import nothing heavy), because a
    # session records the executor that ran it and any machine may have to stop or judge it;
    # ``executor`` in config picks the one new sessions use.
    return True


NOT_HANDLED = object()


def call_sole_implementation(plugin: Any, group: str, hook: str, **kwargs: Any) -> Any:
    """Call the one implementation of firstresult ``hook`` in plugin module ``plugin``, as
    pluggy would, without building a plugin manager; :data:`NOT_HANDLED` for anything else.

    For a process that needs one plugin's one hook (``ecc memory search`` and its backend),
    importing pluggy, ``inspect`` and ``typing`` and registering the plugin cost more than the
    rest of the start-up. This handles only the plain case, where pluggy's answer is the
    function's own return value: a module whose marked functions all implement known hooks of
    ``group``'s family with arguments of their specs, one of them ``hook``, no wrappers, no
    methods. Anything else, including what pluggy would refuse, is left to pluggy.
    """
    from ecc.contract import hookspecs
    from ecc.contract.markers import hookimpl

    if type(plugin) is not type(sys):
        return NOT_HANDLED
    function_type = type(call_sole_implementation)
    method_like = (staticmethod, classmethod, type(hookimpl.__call__))
    found: list[tuple[Any, tuple[str, ...]]] = []
    for name, value in vars(plugin).items():
        if isinstance(value, method_like):
            return NOT_HANDLED  # pluggy would look for markers on these too
        if type(value) is not function_type:
            continue
        opts = value.__dict__.get(hookimpl.attribute)
        if opts is None:
            continue
        impl_hook = opts.get("specname") or name
        spec = getattr(hookspecs, impl_hook, None)
        spec_opts = getattr(spec, "ecc_spec", None)
        if not isinstance(spec_opts, dict) or group not in HOOK_GROUPS.get(impl_hook, ()):
            return NOT_HANDLED
        if opts.get("wrapper") or opts.get("hookwrapper"):
            return NOT_HANDLED
        if any(spec_opts.get(key) for key in ("historic", "warn_on_impl", "warn_on_impl_args")):
            return NOT_HANDLED
        code = value.__code__
        if "." in value.__qualname__ or code.co_kwonlyargcount:
            return NOT_HANDLED  # pluggy may strip a first ``self``; keyword-only: not passed
        if "__wrapped__" in value.__dict__:
            return NOT_HANDLED  # pluggy reads the arguments of the unwrapped function
        argnames = code.co_varnames[: code.co_argcount - len(value.__defaults__ or ())]
        spec_code = spec.__code__
        if not set(argnames) <= set(spec_code.co_varnames[: spec_code.co_argcount]):
            return NOT_HANDLED  # pluggy refuses it: let it say so
        if impl_hook == hook:
            found.append((value, argnames))
    spec_opts = getattr(getattr(hookspecs, hook, None), "ecc_spec", None)
    if len(found) != 1 or not isinstance(spec_opts, dict) or not spec_opts.get("firstresult"):
        return NOT_HANDLED
    function, argnames = found[0]
    return function(*[kwargs[argname] for argname in argnames])  # pluggy's call, exactly


def import_object(value: str) -> Any:
    """Load an entry point's ``module:attr.path`` (extras in brackets are ignored)."""
    import importlib

    module_name, _, attributes = value.split("[")[0].strip().partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for attribute in filter(None, attributes.strip().split(".")):
        obj = getattr(obj, attribute)
    return obj


def _discovery_key() -> str:
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


def discover() -> dict[str, list[tuple[str, str]]]:
    """Every entry point of the ecc groups as ``(name, "module:attr")``, in a stable order.

    Discovery is stevedore's (its own scan cache included); the resulting list is kept in the
    cache dir keyed by :func:`_discovery_key`, so a warm process lists plugins without importing
    stevedore or ``importlib.metadata`` at all. Installing or removing a distribution changes a
    ``sys.path`` directory's mtime and so the key.
    """
    from ecc.runtime import paths

    key = _discovery_key()
    target = paths.cache_dir() / "plugins" / (paths.sha256_hex(key)[:24] + ".json")
    try:
        cached = json.loads(target.read_text())
        if cached["key"] == key:
            return {group: [tuple(pair) for pair in eps] for group, eps in cached["groups"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    from stevedore import NamedExtensionManager

    groups: dict[str, list[tuple[str, str]]] = {}
    for group in GROUPS:
        manager = NamedExtensionManager(group, names=[], on_missing_entrypoints_callback=None)
        seen: dict[str, str] = {}
        for ep in manager.list_entry_points():
            seen.setdefault(ep.name, ep.value)  # first on sys.path wins, as for imports
        groups[group] = sorted(seen.items())
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "groups": groups}))
        os.replace(tmp, target)
    except OSError:
        pass  # an unwritable cache costs only speed
    return groups


class _LazyHooks:
    """``pm.hook`` that loads a hook's family of groups before handing out its caller."""

    __slots__ = ("_set",)

    def __init__(self, plugin_set: PluginSet) -> None:
        self._set = plugin_set

    def __getattr__(self, name: str) -> Any:
        self._set.load(HOOK_GROUPS.get(name, tuple(GROUPS)))
        return getattr(self._set._pm.hook, name)


class PluginSet:
    """The loaded plugins and the one PluginManager that calls them.

    Eager by default (every group loads now). ``lazy=True`` loads nothing until a hook is
    called through :attr:`hook`, then that hook's family of groups (:data:`HOOK_GROUPS`) and
    the groups before them in :data:`GROUPS` order; :attr:`pm` and :attr:`records` load every
    group first, so raw use of the manager (tests registering plugin classes, ``ecc plugins``,
    ``ecc doctor``) sees exactly the eager set. Loading is thread-safe, and a plugin once
    registered is never unregistered, so a hook called on one thread never sees another
    thread's load half done. ``entry_points`` (``{group: [(name, value)]}``) replaces
    discovery, for a process that needs one known plugin checked and reported as usual.
    """

    def __init__(
        self,
        config: Config | None,
        *,
        load_all: bool = False,
        lazy: bool = False,
        entry_points: dict[str, list[tuple[str, str]]] | None = None,
    ) -> None:
        import threading

        import pluggy

        from ecc.contract import hookspecs

        self._pm = pluggy.PluginManager("ecc")
        self._pm.add_hookspecs(hookspecs)
        self._config = config
        self._load_all = load_all
        self._allowed = allowed_names()
        self._lock = threading.RLock()
        self._entry_points = entry_points  # None: discover() on first load
        self._order = [g for g in GROUPS if g in (entry_points or ())]  # in GROUPS order
        self._loaded = 0  # how many of them are registered (a prefix)
        self._records: list[PluginRecord] = []
        self._hooks = _LazyHooks(self)
        if not lazy:
            self.load()

    @property
    def pm(self) -> pluggy.PluginManager:
        """The manager with every group loaded (raw access cannot say which hooks it needs)."""
        self.load()
        return self._pm

    @property
    def hook(self) -> Any:
        """``pm.hook``, loading each hook's family of groups on first use."""
        return self._hooks

    @property
    def records(self) -> list[PluginRecord]:
        """Every entry point's record, in load order (loads every group)."""
        self.load()
        return self._records

    def load(self, groups: tuple[str, ...] | list[str] | None = None) -> None:
        """Register ``groups`` (default: every group) and every group before them in
        :data:`GROUPS` order, if not yet done. Registration order is therefore always the
        same (group order, then entry-point name), and so is the order pluggy calls
        implementations in, whichever hooks a process happened to call first."""
        order = self._order
        if order:
            wanted = order if groups is None else [g for g in order if g in groups]
            if not wanted or order.index(wanted[-1]) < self._loaded:
                return  # the fast path of every hook call after the first
        with self._lock:
            if self._entry_points is None:
                self._entry_points = discover()
                self._order = [g for g in GROUPS if g in self._entry_points]
            order = self._order
            wanted = order if groups is None else [g for g in order if g in groups]
            if not wanted:
                return
            upto = order.index(wanted[-1]) + 1
            while self._loaded < upto:
                group = order[self._loaded]
                self._load_group(group, self._entry_points[group])
                self._loaded += 1  # only now may other threads skip the lock for it

    def _load_group(self, group: str, entry_points: list[tuple[str, str]]) -> None:
        for name, value in entry_points:
            if self._allowed is not None and name not in self._allowed:
                continue  # ECC_PLUGINS leaves it out entirely: not even imported
            record = PluginRecord(name, group, f"{group}:{name} = {value}")
            self._records.append(record)
            if not _selected_by_config(group, name, self._config):
                record.enabled = False
                if not self._load_all:
                    continue
            try:
                plugin = import_object(value)
            except Exception as exc:  # any import-time failure of a third-party module
                record.error = f"{type(exc).__name__}: {exc}"
                warn(
                    f"plugin {name!r} ({record.entry_point}) failed to load and is "
                    f"disabled: {record.error}"
                )
                continue
            self._register(plugin, record)

    def _register(self, plugin: Any, record: PluginRecord) -> bool:
        """Register and check ``plugin``; True when it stays registered."""
        name = _plugin_name(record)
        if self._pm.has_plugin(name):
            return False
        try:
            self._pm.register(plugin, name=name)
        except Exception as exc:  # pluggy.PluginValidationError, ValueError on duplicates
            record.error = f"{type(exc).__name__}: {exc}"
            record.loaded = False
            warn(
                f"plugin {record.name!r} ({record.entry_point}) has an invalid hook "
                f"implementation and is disabled: {exc}"
            )
            return False
        callers = self._pm.get_hookcallers(plugin) or []
        unknown = [caller.name for caller in callers if not caller.has_spec()]
        foreign = [
            caller.name
            for caller in callers
            if caller.has_spec() and record.group not in HOOK_GROUPS.get(caller.name, GROUPS)
        ]
        if unknown:
            record.error = "implements unknown hook(s): " + ", ".join(sorted(unknown))
        elif foreign:
            # It would answer or not depending on which groups a command happened to load.
            record.error = f"implements hook(s) outside the {record.group} family: " + ", ".join(
                sorted(foreign)
            )
        if record.error:
            self._pm.unregister(plugin, name=name)
            warn(f"plugin {record.name!r} ({record.entry_point}) {record.error}; it is disabled")
            return False
        record.loaded = record.enabled
        record.hooks = sorted(caller.name for caller in callers)
        if not record.enabled:
            # Loaded only so that ``ecc plugins`` can show its hooks.
            self._pm.unregister(plugin, name=name)
            return False
        return True

    def add_distribution_info(self) -> None:
        """Fill in distribution and version for each record (slow: scans installed metadata)."""
        from importlib.metadata import distributions

        owners: dict[tuple[str, str], tuple[str, str]] = {}
        for dist in distributions():
            for ep in dist.entry_points:
                if ep.group in GROUPS:
                    owners[(ep.group, ep.name)] = (dist.metadata["Name"], dist.version)
        for record in self._records:
            record.distribution, record.version = owners.get(
                (record.group, record.name), (None, None)
            )


_plugins: PluginSet | None = None


def _plugin_name(record: PluginRecord) -> str:
    return f"{record.group}:{record.name}"


def get_plugins(config: Any = None) -> PluginSet:
    """The plugins of this process, for the effective configuration, loaded group by group.

    ``config`` may be an ``ecc.runtime.config.model.Config`` or an ``ecc.runtime.config.view.ConfigView``; without one,
    the cached view is used so that hot paths never import pydantic. Call hooks through the
    set's ``hook`` to load only their family of groups; ``.pm`` loads every group.
    """
    global _plugins
    if _plugins is None:
        if config is None:
            from ecc.runtime.config import view as fastconfig

            config = fastconfig.view()
        _plugins = PluginSet(config, lazy=True)
    return _plugins


def get_plugin_manager(config: Config | None = None) -> pluggy.PluginManager:
    return get_plugins(config).pm


def reset() -> None:
    """Forget loaded plugins (tests register their own; ``ECC_PLUGINS`` may have changed)."""
    global _plugins
    _plugins = None


def use(plugin_set: PluginSet) -> None:
    """Make ``plugin_set`` the process's plugins (tests that register plugin classes)."""
    global _plugins
    _plugins = plugin_set
