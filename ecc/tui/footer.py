"""The dashboard's footer: Textual's, built with its keys and rebuilt only when they change.

Textual's ``Footer`` shows no key until it is sent its first binding update, then rebuilds
every key widget (a dozen here, each styled anew) after each update, and it is sent several at
start-up (the screen's start, the focus, and once more after the first refresh, from the same
focus): two rebuilds, each after a refresh, so two more layouts of the whole screen before its
first idle. This footer builds its keys when it is composed, and drops an update that arrives
while a rebuild is pending (not yet composed: it reads the bindings as they are when it runs),
or that leaves the keys it shows (shown binding, enabled, tooltip) as they are.

Each ``FooterKey`` also starts compact (its own default) and is then bound to the footer's
``compact`` (not compact here): at mount it gained the ``-compact`` class and lost it again,
two restylings of every key for nothing. The bound keys get the footer's value (and class)
before they mount, so the binding finds them as they should be and changes nothing (the command
palette's key is not bound: it stays compact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.screen import Screen


class CoalescedFooter(Footer):
    """A ``Footer`` that rebuilds once for the binding updates sent before it rebuilds."""

    _update_pending = False  # a rebuild is scheduled and has not read the bindings yet
    _composed: list[Any] | None = None  # the bindings the keys on screen were built from

    def bindings_changed(self, screen: Screen) -> None:
        """``Footer.bindings_changed``, scheduling no rebuild while one is pending or when the
        keys would come out the same."""
        self._bindings_ready = True
        if self._update_pending or not screen.app.app_focus:
            return  # without the focus Textual's footer waits too: regaining it sends one
        if self.is_attached and screen is self.screen and self._shown(screen) != self._composed:
            self._update_pending = True
            self.call_after_refresh(self.recompose)

    def _shown(self, screen: Screen) -> list[Any]:
        """What the keys are built from: each shown binding (and the command palette's),
        whether enabled, its tooltip."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return [
            (key, a.binding, a.enabled, a.tooltip)
            for key, a in screen.active_bindings.items()
            if a.binding.show or key == palette
        ]

    def compose(self) -> ComposeResult:
        self._update_pending = False  # a later update needs a rebuild of its own
        # Textual's footer shows no key until the first binding update, and builds them all
        # after the next refresh: a second layout of the screen before its first idle. The
        # keys are built with the footer here; that update rebuilds them only if they differ.
        self._bindings_ready = True
        self._composed = self._shown(self.screen)
        for widget in super().compose():  # a grouped key too: compose yields it on its own
            bound = getattr(widget, "_reactive_connect", None) or {}
            if isinstance(widget, FooterKey) and "compact" in bound:  # not the palette's key
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget
