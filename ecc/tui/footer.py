"""The dashboard's footer: Textual's, rebuilding its keys once per frame.

Textual's ``Footer`` rebuilds every key widget (a dozen here, each styled anew) after each
binding update it is sent, and it is sent one for each of several causes in the same frame
(the screen's start, a focus, a refresh of the bindings): two rebuilds at start-up where one
reads the same bindings. This footer drops an update that arrives while one is pending.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen


class CoalescedFooter(Footer):
    """A ``Footer`` whose binding updates within one frame lead to one rebuild."""

    _update_pending = False

    def bindings_changed(self, screen: Screen) -> None:
        if self._update_pending:
            return  # the pending rebuild reads the bindings as they are then
        self._update_pending = True
        self.call_after_refresh(self._updates_taken)  # runs before the rebuild it schedules
        super().bindings_changed(screen)

    def _updates_taken(self) -> None:
        self._update_pending = False
