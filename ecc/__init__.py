"""ecc: a plugin-based control plane for AI coding agents.

Kept import-free on purpose: ``ecc --version`` and ``ecc hook`` run on every tool call of an
agent, so nothing heavy may be imported at package import time.
"""

__version__ = "0.1.0"
VERSION_TEXT = f"ecc {__version__}"  # what ``ecc --version`` prints, on the fast path and click's
