"""The fronts on the command line: the click app (``app``), each command's module, and the
fast paths (``fast``) that answer the hottest commands without importing click."""
