"""A hot path's hooks called without pluggy, in the order a full pluggy load worked out.

Importing pluggy brings ``inspect``, ``typing`` and ``dataclasses``: about 20 ms of an ``ecc hook``
that must stay far under 100 ms. A full load records, for each implementation of the hooks a
hot path calls, its plugin, its module and that file's identity, the function's name and the
argument names pluggy passes, in pluggy's call order (``index.record_hot``). A warm start then
calls those functions itself as pluggy's ``_multicall`` calls plain implementations: each with
the arguments it names, ``None`` answers left out, a ``firstresult`` hook stopping at the first
answer. A record with a wrapper or a spec with defaults is not used (:func:`build` returns
None): pluggy calls those; one whose module file changed since is no record at all.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported: this is the point of the module
if TYPE_CHECKING:
    from typing import Any


class DirectImpl:
    """One recorded implementation, with the attributes :mod:`ecc.runtime.plugins.calls` reads
    from pluggy's ``HookImpl`` (``plugin_name``, ``function``, ``argnames``)."""

    __slots__ = ("argnames", "function", "plugin", "plugin_name")

    def __init__(self, plugin: str, registered_as: str, function: Any, argnames: tuple[str, ...]):
        self.plugin = plugin  # the entry point's registered name (``group:name``)
        self.plugin_name = registered_as  # as a hot path registers it: ``group:name|module``
        self.function = function
        self.argnames = argnames

    def __repr__(self) -> str:
        return f"<DirectImpl {self.plugin_name!r}>"


class DirectCaller:
    """``hook.NAME``: calls its implementations as pluggy calls plain ones."""

    __slots__ = ("firstresult", "impls", "name")

    def __init__(self, name: str, impls: list[DirectImpl], firstresult: bool) -> None:
        self.name = name
        self.impls = impls  # in call order
        self.firstresult = firstresult

    def get_hookimpls(self) -> list[DirectImpl]:
        """The implementations in pluggy's storage order (the reverse of its call order)."""
        return self.impls[::-1]

    def __call__(self, **kwargs: Any) -> Any:
        results = []
        for impl in self.impls:
            try:
                args = [kwargs[argname] for argname in impl.argnames]
            except KeyError as missing:
                from pluggy import HookCallError  # what pluggy raises, imported only then

                raise HookCallError(
                    f"hook call must provide argument {missing.args[0]!r}"
                ) from None
            result = impl.function(*args)
            if result is not None:
                if self.firstresult:
                    return result
                results.append(result)
        return None if self.firstresult else results


class _Hooks:
    """``set.hook`` / ``set.harness_hook(NAME)``: a caller per hook, for the plugins allowed."""

    __slots__ = ("_owners", "_set")

    def __init__(self, direct: DirectSet, owners: frozenset[str] | None) -> None:
        self._set = direct
        self._owners = owners

    def __getattr__(self, hook: str) -> DirectCaller:
        return self._set.caller(hook, self._owners)


class DirectSet:
    """The recorded implementations of a hot path's hooks, answering like a ``PluginSet``."""

    def __init__(
        self,
        calls: dict[str, list[DirectImpl]],
        firstresult: dict[str, bool],
        harnesses: dict[str, list[str]],
        harness_hooks: frozenset[str],
    ) -> None:
        self._calls = calls
        self._firstresult = firstresult
        self._harnesses = harnesses
        self._harness_hooks = harness_hooks

    @property
    def hook(self) -> _Hooks:
        return _Hooks(self, None)

    def harness_hook(self, harness: str) -> _Hooks:
        """The harness hooks of the plugins that declare ``harness`` only."""
        return _Hooks(self, frozenset(self._harnesses.get(harness, ())))

    def harness_owners(self) -> dict[str, list[str]]:
        return self._harnesses

    def caller(self, hook: str, owners: frozenset[str] | None) -> DirectCaller:
        if hook not in self._calls:
            raise AttributeError(f"{hook} is not one of the hooks this start recorded")
        impls = self._calls[hook]
        if owners is not None:
            if hook not in self._harness_hooks:
                raise AttributeError(f"{hook} is not a hook that takes a harness")
            impls = [impl for impl in impls if impl.plugin in owners]
        return DirectCaller(hook, impls, self._firstresult[hook])


def from_record(config: Any, hooks: tuple[str, ...], harness: str | None) -> DirectSet | None:
    """The :class:`DirectSet` for ``hooks`` from the start-up index, or None (not recorded, or
    not callable without pluggy): without importing the loader, whose own import a warm
    ``ecc hook`` does not need."""
    from ecc.runtime.plugins import index

    recorded = index.read_hot(config, hooks)
    if recorded is None or not isinstance(recorded.get("harness_hooks"), list):
        return None
    try:
        return build(recorded, harness, frozenset(recorded["harness_hooks"]))
    except Exception:  # a module that no longer loads alone: the loader's paths decide
        return None


def build(recorded: dict[str, Any], harness: str | None, harness_hooks: frozenset[str]) -> Any:
    """The :class:`DirectSet` of ``recorded`` (for ``harness``: its own adapter's modules), or
    None when the record cannot stand for pluggy's answer (no call order recorded, a function
    no longer where it was). ``index.read_hot`` has checked that no module changed since."""
    from ecc.runtime.plugins.index import load_module, needed_modules

    calls_recorded = recorded.get("calls")
    if not isinstance(calls_recorded, dict):
        return None
    modules: dict[str, Any] = {
        f"{entry['plugin']}|{entry['module']}": (entry["module"], entry["file"])
        for entry in needed_modules(recorded, harness, harness_hooks)
    }
    calls: dict[str, list[DirectImpl]] = {}
    firstresult: dict[str, bool] = {}
    for hook, recorded_hook in calls_recorded.items():
        firstresult[hook] = bool(recorded_hook["firstresult"])
        impls = calls[hook] = []
        for plugin, module_name, attribute, argnames in recorded_hook["impls"]:
            registered_as = f"{plugin}|{module_name}"
            if registered_as not in modules:
                continue  # another harness's adapter: never called here
            module = load_module(*modules[registered_as])
            function = getattr(module, attribute, None)
            if function is None:
                return None
            impls.append(DirectImpl(plugin, registered_as, function, tuple(argnames)))
    return DirectSet(calls, firstresult, recorded["harnesses"], harness_hooks)
