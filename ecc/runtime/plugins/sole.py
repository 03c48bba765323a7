"""Asking one plugin alone: the memory backend of ``ecc memory search``.

Kept apart from the loader so that a warm search imports only discovery and the start-up index:
the loader (and pluggy) are imported when what pluggy found is not recorded yet.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported: a memory search is a hot path
if TYPE_CHECKING:
    from typing import Any


def call_sole(group: str, plugin: str, hook: str, /, **kwargs: Any) -> Any:
    """The answer of firstresult ``hook`` from the plugin ``group:plugin`` alone (None when it is
    not installed or not allowed), loading nothing else.

    Warm, when pluggy has already found that plugin to implement ``hook`` once and plainly, its
    recorded function is called directly with the arguments pluggy passes (see
    :mod:`ecc.runtime.plugins.index`): a memory search then imports neither pluggy nor
    stevedore. Otherwise a plugin set holding that entry point alone answers, checking and
    refusing a broken plugin with the usual warning, and records what pluggy found.
    """
    from ecc.runtime.plugins import discovery, index

    allowed = discovery.allowed_names()
    installed = discovery.discovery_key()  # one stat of each sys.path entry, for both lookups
    value = dict(discovery.discover(installed).get(group, [])).get(plugin)
    if value is None or (allowed is not None and plugin not in allowed):
        return None
    recorded = index.read_sole(group, plugin, value, hook, installed)
    if recorded is not None:
        try:
            function = getattr(discovery.import_object(value), recorded["attribute"])
        except Exception:
            function = None  # the plugin set below reports it, as a full load does
        if function is not None:
            return function(*[kwargs[arg] for arg in recorded["argnames"]])
    from ecc.runtime.plugins.loader import PluginSet

    single = PluginSet(None, lazy=True, entry_points={group: [(plugin, value)]})
    caller = getattr(single.hook, hook)
    registered = single._pm.get_plugin(f"{group}:{plugin}")
    if registered is not None:
        index.record_sole(group, plugin, value, hook, installed, caller, registered)
    return caller(**kwargs)
