"""Discovery (stevedore) and registration (pluggy) of every plugin.

Built-ins, first-party adapters and third-party packages are all found the same way, through the
entry-point groups below, and registered in one ``pluggy.PluginManager("ecc")``. The core never
imports a plugin module by name.

A plugin that cannot be imported, or whose hook implementations do not match ``ecc.hookspecs``,
is left out with a warning on stderr naming it and its entry point; ecc keeps working.

``ECC_PLUGINS`` restricts loading to a comma-separated list of plugin (entry-point) names;
set and empty, it loads none.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from ecc import hookspecs

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from ecc.config import Config

GROUPS: dict[str, str] = {
    "ecc.adapters": "adapter",
    "ecc.risk_scorers": "risk scorer",
    "ecc.notifiers": "notifier",
    "ecc.memory_backends": "memory backend",
}


@dataclass
class PluginRecord:
    """What ``ecc plugins`` reports about one entry point."""

    name: str
    group: str
    entry_point: str
    distribution: str | None = None
    version: str | None = None
    hooks: list[str] = field(default_factory=list)
    enabled: bool = True
    loaded: bool = False
    error: str | None = None

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
    return True


def _describe_entry_point(group: str, ep: EntryPoint) -> str:
    return f"{group}:{ep.name} = {ep.value}"


class PluginSet:
    """The loaded plugins and the one PluginManager that calls them."""

    def __init__(self, config: Config | None, *, load_all: bool = False) -> None:
        self.pm = pluggy.PluginManager("ecc")
        self.pm.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self._load(config, load_all)

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def _load(self, config: Config | None, load_all: bool) -> None:
        from stevedore import ExtensionManager

        allowed = allowed_names()
        records = self.records

        class _Selective(ExtensionManager):  # type: ignore[type-arg]
            """Imports only the entry points that config and ECC_PLUGINS select."""

            def _load_one_plugin(self, ep, invoke_on_load, invoke_args, invoke_kwds):  # type: ignore[no-untyped-def,override]
                group = self.namespace
                if allowed is not None and ep.name not in allowed:
                    return None  # ECC_PLUGINS leaves it out entirely: not even imported
                record = PluginRecord(ep.name, group, _describe_entry_point(group, ep))
                records.append(record)
                if not _selected_by_config(group, ep.name, config):
                    record.enabled = False
                    if not load_all:
                        return None
                ext = super()._load_one_plugin(ep, invoke_on_load, invoke_args, invoke_kwds)
                ext.record = record
                return ext

        def failed(manager: Any, ep: EntryPoint, err: BaseException) -> None:
            record = next(r for r in reversed(records) if r.name == ep.name)
            record.error = f"{type(err).__name__}: {err}"
            warn(
                f"plugin {ep.name!r} ({_describe_entry_point(manager.namespace, ep)}) "
                f"failed to load and is disabled: {record.error}"
            )

        for group in GROUPS:
            manager = _Selective(group, on_load_failure_callback=failed)
            for ext in manager.extensions:
                self._register(ext.plugin, ext.record)

    def _register(self, plugin: Any, record: PluginRecord) -> None:
        name = f"{record.group}:{record.name}"
        if self.pm.has_plugin(name):
            return
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:  # pluggy.PluginValidationError, ValueError on duplicates
            record.error = f"{type(exc).__name__}: {exc}"
            warn(
                f"plugin {record.name!r} ({record.entry_point}) has an invalid hook "
                f"implementation and is disabled: {exc}"
            )
            return
        unknown = [
            caller.name for caller in self.pm.get_hookcallers(plugin) or [] if not caller.has_spec()
        ]
        if unknown:
            self.pm.unregister(plugin, name=name)
            record.error = "implements unknown hook(s): " + ", ".join(sorted(unknown))
            warn(f"plugin {record.name!r} ({record.entry_point}) {record.error}; it is disabled")
            return
        record.loaded = record.enabled
        record.hooks = sorted(caller.name for caller in self.pm.get_hookcallers(plugin) or [])
        if not record.enabled:
            # Loaded only so that ``ecc plugins`` can show its hooks.
            self.pm.unregister(plugin, name=name)

    def add_distribution_info(self) -> None:
        """Fill in distribution and version for each record (slow: scans installed metadata)."""
        from importlib.metadata import distributions

        owners: dict[tuple[str, str], tuple[str, str]] = {}
        for dist in distributions():
            for ep in dist.entry_points:
                if ep.group in GROUPS:
                    owners[(ep.group, ep.name)] = (dist.metadata["Name"], dist.version)
        for record in self.records:
            record.distribution, record.version = owners.get(
                (record.group, record.name), (None, None)
            )


_plugins: PluginSet | None = None


def get_plugins(config: Config | None = None) -> PluginSet:
    """The plugins of this process, loaded once for the effective configuration."""
    global _plugins
    if _plugins is None:
        if config is None:
            from ecc.config import get_config

            config = get_config()
        _plugins = PluginSet(config)
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
