"""The optional parts of ecc and the one-line error that names the extra a command needs.

The core distribution runs the CLI, the vault, sessions and hooks; the dashboard, the MCP server,
the remote API, the web pages and the Celery executor come with extras. A command whose extra is
missing must say which one to install instead of failing with an ImportError traceback.
"""

from __future__ import annotations

from ecc.contract.errors import EccError

DISTRIBUTION = "ecc-control-plane"  # the name on PyPI; the import package and command are `ecc`


def extra_hint(extra: str, feature: str) -> str:
    """``FEATURE needs the 'EXTRA' extra: …``, with the commands that install it."""
    package = f"'{DISTRIBUTION}[{extra}]'"
    return f"{feature} needs the '{extra}' extra: ecc install {package} (or pipx install {package})"


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """Raise :class:`EccError` naming ``extra`` unless every one of ``modules`` can be imported.

    Only looks the modules up (``find_spec``), so a present extra costs no import here.
    """
    import importlib.util

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise EccError(extra_hint(extra, feature))
