"""``ecc dashboard``: a Textual terminal UI to watch and steer every session.

* :mod:`ecc.tui.data` reads the store incrementally (no Textual import: testable and cheap);
* :mod:`ecc.tui.app` is the Textual application (layout, refresh, panes); :mod:`ecc.tui.controls`
  its key handlers, :mod:`ecc.tui.actions` the operations they run, :mod:`ecc.tui.screens` its
  dialogs.

Nothing outside the dashboard path imports this package's Textual modules, so other commands
never pay Textual's import cost.
"""
