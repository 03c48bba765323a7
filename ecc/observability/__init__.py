"""Watching what agents do: ``risk`` (scoring a tool call), ``toolhook`` (what ``ecc hook`` does
with a harness payload), ``notify`` (delivery to notifiers) and ``budgets`` (usage against limits).
Imports the store, never the sessions package."""
