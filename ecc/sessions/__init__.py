"""Managed agent sessions: state model, store, runner, manager, daemon and the executor seam.

Import the submodules you need (``ecc.sessions.manager``…); this package imports nothing heavy so
``ecc hook`` can reach the store without paying for the runner or the CLI.
"""
