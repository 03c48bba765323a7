"""Calling hook implementations one by one, for the services that need each plugin's own answer.

pluggy's ``pm.hook.NAME(...)`` gives the answers of every implementation as one list. Risk
scoring needs to know which scorer said what and to skip one that raises; notifications run each
notifier in its own thread with its own settings; the harness registry needs to know which
plugin declared which harness. :func:`implementations` gives those callers each implementation as
a callable named by its plugin, in pluggy's call order, and :func:`call_each` calls them with the
failures kept apart; neither reaches into pluggy's objects elsewhere.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported: ``ecc hook`` scores every tool call
if TYPE_CHECKING:
    from typing import Any


def plugin_name(registered: str) -> str:
    """The plugin's own name (its entry-point name) from the name it is registered under:
    ``group:name``, or ``group:name|module`` for a module a hot path registered on its own."""
    return (registered.partition(":")[2] or registered).partition("|")[0]


class Implementation:
    """One plugin's implementation of one hook; calling it passes the arguments it names, as
    pluggy does (``impl(call=…, config=…)``)."""

    __slots__ = ("argnames", "function", "name", "registered_as")

    def __init__(self, registered_as: str, function: Any, argnames: tuple[str, ...]) -> None:
        self.registered_as = registered_as
        self.name = plugin_name(registered_as)
        self.function = function
        self.argnames = argnames

    def __call__(self, **kwargs: Any) -> Any:
        return self.function(*[kwargs[arg] for arg in self.argnames])

    def __repr__(self) -> str:
        return f"Implementation({self.registered_as!r})"


def implementations(caller: Any) -> list[Implementation]:
    """The implementations of hook ``caller`` (``pm.hook.NAME``) in the order pluggy calls them."""
    return [
        Implementation(impl.plugin_name, impl.function, tuple(impl.argnames))
        for impl in reversed(caller.get_hookimpls())
    ]


class Outcome:
    """What one implementation answered, or the exception it raised (``error``)."""

    __slots__ = ("error", "name", "registered_as", "result")

    def __init__(
        self, registered_as: str, result: Any = None, error: BaseException | None = None
    ) -> None:
        self.registered_as = registered_as
        self.name = plugin_name(registered_as)
        self.result = result
        self.error = error

    def describe_error(self) -> str:
        return f"{self.name}: {type(self.error).__name__}: {self.error}"


def call_each(caller: Any, **kwargs: Any) -> list[Outcome]:
    """Call every implementation of ``caller`` with ``kwargs``; one that raises does not stop
    the others (its :class:`Outcome` holds the error)."""
    outcomes = []
    for impl in implementations(caller):
        try:
            outcomes.append(Outcome(impl.registered_as, impl(**kwargs)))
        except Exception as exc:  # a plugin's failure is reported, never fatal to the others
            outcomes.append(Outcome(impl.registered_as, error=exc))
    return outcomes
