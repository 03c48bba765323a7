"""Discovery (stevedore) and registration (pluggy) of every plugin: the one plugin loader.

Built-ins, first-party adapters and third-party packages are all found the same way, through the
entry-point groups of the contract (``ecc.contract.hookspecs.GROUPS``), and registered in one
``pluggy.PluginManager("ecc")``. The core never imports a plugin module by name. A plugin that
cannot be imported, or whose hook implementations do not match the specs, is left out with a
warning on stderr naming it and its entry point; ecc keeps working.

Groups load lazily in the process's :class:`PluginSet`: calling a hook through
``get_plugins().hook`` first loads the groups of that hook's family (each spec's ``@family``,
collected in :data:`HOOK_GROUPS`) and every group before them in ``GROUPS`` order, so ``ecc run
-d`` imports adapters and executors but no notifier, scorer or memory backend. A plugin may
implement only hooks of its own group's family (else it is refused like one with an unknown
hook), and groups always register in the same order, so every hook answers exactly as if every
group had been loaded first. ``PluginSet.pm`` (raw access) loads every group.

Harness hooks (a spec whose first argument is ``harness``) are called through
:meth:`PluginSet.harness_hook`, on the plugins that declare the harness only. The hot paths use
the same set in two cheaper forms built from what a full load recorded
(:mod:`ecc.runtime.plugins.index`): :meth:`PluginSet.for_hooks`, and
:func:`ecc.runtime.plugins.sole.call_sole`, which imports this module only when cold.

``ECC_PLUGINS`` restricts loading to a comma-separated list of plugin (entry-point) names;
set and empty, it loads none.
"""

from __future__ import annotations

import sys

from ecc.contract import hookspecs
from ecc.contract.hookspecs import GROUPS
from ecc.runtime.plugins.discovery import allowed_names, discover, import_object

TYPE_CHECKING = False  # without importing typing (a memory search imports this module)
if TYPE_CHECKING:
    from typing import Any

    import pluggy

    from ecc.contract.types import Config
    from ecc.runtime.plugins.direct import DirectSet


def _families() -> dict[str, tuple[str, ...]]:
    """Each hook's family, as its spec declares it (``@family`` in ``ecc.contract.hookspecs``)."""
    return {
        name: value.ecc_family
        for name, value in vars(hookspecs).items()
        if hasattr(value, "ecc_spec") and hasattr(value, "ecc_family")
    }


# The family of each hook: the entry-point groups whose plugins may implement it.
HOOK_GROUPS: dict[str, tuple[str, ...]] = _families()
# Hooks that take the harness name first: called only on the plugins that declare that harness.
HARNESS_HOOKS = frozenset(
    name
    for name, value in vars(hookspecs).items()
    if name in HOOK_GROUPS and value.__code__.co_varnames[:1] == ("harness",)
)


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


class _LazyHooks:
    """``pm.hook`` that loads a hook's family of groups before handing out its caller."""

    __slots__ = ("_set",)

    def __init__(self, plugin_set: PluginSet) -> None:
        self._set = plugin_set

    def __getattr__(self, name: str) -> Any:
        self._set.load(HOOK_GROUPS.get(name, tuple(GROUPS)))
        return getattr(self._set._pm.hook, name)


class HarnessHooks:
    """``harness_hook(NAME).ecc_build_command(...)``: a harness hook of the declaring plugins."""

    __slots__ = ("_harness", "_set")

    def __init__(self, plugin_set: PluginSet, harness: str) -> None:
        self._set = plugin_set
        self._harness = harness

    def __getattr__(self, hook: str) -> Any:
        return self._set._harness_caller(self._harness, hook)


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
        import _thread  # threading's lock without importing threading (ecc hook builds a set)

        import pluggy

        self._pm = pluggy.PluginManager("ecc")
        self._pm.add_hookspecs(hookspecs)
        self._config = config
        self._load_all = load_all
        self._allowed = allowed_names()
        self._lock = _thread.RLock()
        self._entry_points = entry_points  # None: discover() on first load
        self._order = [g for g in GROUPS if g in (entry_points or ())]  # in GROUPS order
        self._loaded = 0  # how many of them are registered (a prefix)
        self._records: list[PluginRecord] = []
        self._hooks = _LazyHooks(self)
        self._owners: dict[str, list[str]] | None = None  # harness -> plugins that declare it
        if not lazy:
            self.load()

    @classmethod
    def for_hooks(
        cls, config: Config, hooks: tuple[str, ...], harness: str | None = None
    ) -> PluginSet | DirectSet:
        """A set that can answer just ``hooks``, built from the start-up index when it has
        them: only the modules implementing them are imported, each on its own (see
        :mod:`ecc.runtime.plugins.index`), and with ``harness`` given, a module implementing
        only harness hooks only for the plugins that declare that harness; called without
        pluggy when the index holds pluggy's call order (:mod:`ecc.runtime.plugins.direct`).
        Otherwise a lazy set of the process, whose load is then recorded for the next start."""
        from ecc.runtime.plugins import index

        recorded = index.read_hot(config, hooks)
        if recorded is not None:
            try:
                from ecc.runtime.plugins import direct

                called_directly = direct.build(recorded, harness, HARNESS_HOOKS)
                if called_directly is not None:
                    return called_directly
                return cls._lean(config, recorded, harness)
            except Exception:  # a module that no longer loads alone: the full path decides
                pass
        full = get_plugins(config)
        index.record_hot(full, config, hooks, HARNESS_HOOKS)
        return full

    @classmethod
    def _lean(cls, config: Config, recorded: dict[str, Any], harness: str | None) -> PluginSet:
        """The set of the recorded modules alone (for ``harness``: its own adapter's)."""
        from ecc.runtime.plugins import index

        lean = cls(config, lazy=True, entry_points={})
        for entry in index.needed_modules(recorded, harness, HARNESS_HOOKS):
            module = index.load_module(entry["module"], entry["file"])
            name = f"{entry['plugin']}|{entry['module']}"
            if not lean._pm.has_plugin(name):
                lean._pm.register(module, name=name)
        lean._owners = recorded["harnesses"]
        return lean

    def pm_for(self, hooks: tuple[str, ...]) -> pluggy.PluginManager:
        """The manager with the families of ``hooks`` (and the groups before them) loaded."""
        self.load(tuple({group for hook in hooks for group in HOOK_GROUPS.get(hook, GROUPS)}))
        return self._pm

    def harness_owners(self) -> dict[str, list[str]]:
        """Each harness name with the registered plugins whose ``ecc_harnesses`` declares it,
        in registration order; computed once. Harness hooks take the canonical name (callers
        resolve an alias first), so an alias owns nothing."""
        if self._owners is None:
            from ecc.runtime.plugins.calls import call_each

            owners: dict[str, list[str]] = {}
            for outcome in reversed(call_each(self.hook.ecc_harnesses, config=self._config)):
                if outcome.error is not None:
                    warn(
                        f"plugin {outcome.name!r} could not declare its harnesses: "
                        f"{type(outcome.error).__name__}: {outcome.error}"
                    )
                    continue
                result = outcome.result
                infos = result if isinstance(result, list | tuple) else [result]
                for info in infos:
                    if info is None:
                        continue
                    plugins = owners.setdefault(info.name, [])
                    if outcome.registered_as not in plugins:
                        plugins.append(outcome.registered_as)
            self._owners = owners
        return self._owners

    def harness_hook(self, harness: str) -> HarnessHooks:
        """The harness hooks (``ecc_build_command``, ``ecc_parse_hook_payload``, …) of the
        plugins that declare ``harness``: no other adapter is called for it."""
        return HarnessHooks(self, harness)

    def _harness_caller(self, harness: str, hook: str) -> Any:
        if hook not in HARNESS_HOOKS:
            raise AttributeError(f"{hook} is not a hook that takes a harness")
        owners = set(self.harness_owners().get(harness, ()))
        pm = self.pm_for((hook,))
        others = [  # a hot path's module is registered as "group:name|module"
            plugin
            for registered, plugin in pm.list_name_plugin()
            if registered.partition("|")[0] not in owners
        ]
        return pm.subset_hook_caller(hook, remove_plugins=others)

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

    ``config`` is the validated view (``ecc.runtime.config.view.view()`` when not given), so hot
    paths never import pydantic. Call hooks through the set's ``hook`` to load only their family
    of groups; ``.pm`` loads every group.
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
