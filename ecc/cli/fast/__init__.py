"""The plain forms of the hottest commands, answered without importing click: ``hook``, ``run``
(``ecc run -d``, ``ecc start``, the runner's ``run-session``) and ``search`` (``ecc memory
search``). Each reads the options declared in :mod:`ecc.cli.options` and hands anything else to
the click app."""
