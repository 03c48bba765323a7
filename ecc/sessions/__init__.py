"""Managed agent sessions: ``service`` (start: the one way a front starts a session), ``manager``
(find, stop, resume, remove), ``harnesses`` (which adapter runs what), ``worktrees``, ``executor``
(where a session runs), ``runner`` with ``runoutput`` (``spool``, ``capture``, ``backpressure``,
``parsing``) and ``placement``, ``daemon``, ``procs`` and ``supervisor``. The package itself
imports nothing heavy."""
