"""The sessions MCP server a managed session's harness gets (``LaunchContext.mcp_servers``).

When ``[delegation] enabled`` and the session's harness declares the ``session_mcp`` capability,
the runner hands the adapter a :class:`ecc.contract.types.SessionMcpServer`: ``ecc-sessions-mcp``
bound to this session by ``ECC_SESSION_ID`` (and to the policy of the directory where ``ecc
run`` was invoked, as the session's hook is), which the adapter registers for that process
only. Through it the agent starts children, reads their results and its messages
(:mod:`ecc.mcp.sessions`). The variables ecc reads (``ECC_*``, ``XDG_*``) are passed on
explicitly (and set in the harness's environment too): a harness may start its MCP servers
with a filtered environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ecc.observability.toolhook import POLICY_DIR_ENV
from ecc.runtime import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ecc.contract.types import HarnessInfo, SessionMcpServer
    from ecc.store.models import Session

CAPABILITY = "session_mcp"
SERVER_NAME = "ecc-sessions"
SCRIPT = "ecc-sessions-mcp"
SESSION_ENV = "ECC_SESSION_ID"
PASSED_PREFIXES = ("ECC_", "XDG_")
# Variables of the runner's own session that would mislead a server bound by ECC_SESSION_ID.
NOT_PASSED = frozenset({"ECC_SESSION_HOOK", "ECC_HARNESS", "ECC_WORKING_DIR"})


def server_argv() -> tuple[str, ...]:
    """This installation's ``ecc-sessions-mcp`` (absolute), else ``python -m ecc.mcp.sessions``."""
    script = Path(sys.executable).parent / SCRIPT
    if script.is_file() and os.access(script, os.X_OK):
        return (str(script),)
    return (sys.executable, "-m", "ecc.mcp.sessions")


def server_env(session: Session, environ: Any = None) -> dict[str, str]:
    """What binds the server to ``session``: its id, its policy directory, and ecc's own
    locations (store, state, config) as the runner has them."""
    environ = os.environ if environ is None else environ
    env = {
        key: value
        for key, value in environ.items()
        if key.startswith(PASSED_PREFIXES) and key not in NOT_PASSED
    }
    env[SESSION_ENV] = session.id
    env[POLICY_DIR_ENV] = str(session.project_dir)
    return env


def for_session(session: Session, info: HarnessInfo, config: Any) -> tuple[SessionMcpServer, ...]:
    """The servers to register in ``session``'s harness: none when delegation is off, the
    adapter cannot register them, or the ``mcp`` extra is not installed."""
    if not config.delegation.enabled or CAPABILITY not in info.capabilities:
        return ()
    import importlib.util

    if importlib.util.find_spec("mcp") is None:  # without the mcp extra the server cannot run
        return ()
    from ecc.contract.types import SessionMcpServer
    from ecc.sessions.enforcement import session_directory

    directory = paths.ensure_private_dir(session_directory(session.id))
    return (
        SessionMcpServer(
            name=SERVER_NAME, argv=server_argv(), env=server_env(session), directory=directory
        ),
    )
