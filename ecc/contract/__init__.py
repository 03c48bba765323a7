"""The plugin contract: everything a plugin imports from ecc.

``hookspecs`` (every hook, its family and the entry-point groups), ``markers`` (``@hookimpl``,
``@hookspec``), ``types`` (the data crossing the hooks, and the config view protocol) and
``errors`` (the one exception type users see). Imports nothing else of ecc.
"""
