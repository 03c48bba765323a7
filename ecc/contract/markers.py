"""The ``@hookspec`` and ``@hookimpl`` decorators of the ``ecc`` plugin project.

They mark functions exactly as ``pluggy.HookspecMarker("ecc")`` and
``pluggy.HookimplMarker("ecc")`` do (the same ``ecc_spec`` / ``ecc_impl`` option dicts, which
pluggy's ``PluginManager`` reads at registration), without importing pluggy. Every plugin module
imports ``hookimpl``; pluggy brings ``inspect`` and ``typing`` with it, about 12 ms of a memory
search that otherwise needs no plugin manager (see ``ecc.runtime.plugins.sole.call_sole``).
``tests/foundation/test_markers.py`` keeps the options equal to pluggy's own markers'.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (it costs ~3 ms)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

PROJECT = "ecc"


def _decorate(function: Callable[..., Any] | None, attribute: str, **opts: Any) -> Any:
    """``@marker`` (``function`` given) or ``@marker(...)`` (a decorator returned)."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, attribute, dict(opts))  # a dict of its own, as pluggy's markers do
        return func

    return mark if function is None else mark(function)


class HookspecMarker:
    """``@hookspec`` / ``@hookspec(firstresult=True)``: declares a hook of the contract."""

    attribute = PROJECT + "_spec"

    def __call__(
        self,
        function: Callable[..., Any] | None = None,
        firstresult: bool = False,
        historic: bool = False,
        warn_on_impl: Warning | None = None,
        warn_on_impl_args: Mapping[str, Warning] | None = None,
    ) -> Any:
        if historic and firstresult:
            raise ValueError("cannot have a historic firstresult hook")
        return _decorate(
            function,
            self.attribute,
            firstresult=firstresult,
            historic=historic,
            warn_on_impl=warn_on_impl,
            warn_on_impl_args=warn_on_impl_args,
        )


class HookimplMarker:
    """``@hookimpl`` / ``@hookimpl(tryfirst=True, …)``: marks a plugin's implementation."""

    attribute = PROJECT + "_impl"

    def __call__(
        self,
        function: Callable[..., Any] | None = None,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> Any:
        return _decorate(
            function,
            self.attribute,
            wrapper=wrapper,
            hookwrapper=hookwrapper,
            optionalhook=optionalhook,
            tryfirst=tryfirst,
            trylast=trylast,
            specname=specname,
        )


def family(*groups: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@family("ecc.adapters")`` on a hook spec: the entry-point groups whose plugins may
    implement it (the loader loads those groups before calling it, and refuses a plugin that
    implements a hook outside its own group's family)."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        func.ecc_family = tuple(groups)  # type: ignore[attr-defined]
        return func

    return mark


hookspec = HookspecMarker()
hookimpl = HookimplMarker()
