"""Enforcement owned by the session: ecc's tool-call hook applied to the harness process it runs.

A managed session does not depend on ``ecc hooks install`` or on what the repository committed:
when its harness declares the ``session_hooks`` capability, the runner hands the adapter a
:class:`ecc.contract.types.SessionEnforcement` (``LaunchContext.enforcement``) and the adapter
adds ecc's hook for that process alone (Claude Code's ``--settings``, a private settings file,
an environment variable). The hook it runs is ``ecc hook --harness NAME --managed``, which reads
the policy of the directory where ``ecc run`` was invoked (``ECC_POLICY_DIR``), not the
worktree's: a worktree is built from HEAD and the agent can edit it. Any hook the user installed
steps aside inside such a session (``ECC_SESSION_HOOK``), so each call is decided and recorded
once.
"""

from __future__ import annotations

import math
import os
import shlex
import sys
from pathlib import Path

from ecc.observability.toolhook import POLICY_DIR_ENV, SESSION_HOOK_ENV
from ecc.runtime import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ecc.contract.types import HarnessInfo, SessionEnforcement
    from ecc.store.models import Session

__all__ = ["POLICY_DIR_ENV", "SESSION_HOOK_ENV", "for_session", "session_env", "warning"]

CAPABILITY = "session_hooks"
HOOK_TIMEOUT_MARGIN = 30  # seconds past the approval timeout: scoring, recording, answering


def ecc_argv() -> list[str]:
    """How a harness on this machine runs this ecc: the console script next to the interpreter
    (it starts faster than ``python -m ecc``), else ``python -m ecc``; absolute, so the
    harness's PATH does not matter."""
    script = Path(sys.executable).parent / "ecc"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "ecc"]


def hook_timeout_secs(config: Any) -> int:
    """Seconds a harness must give ``ecc hook``: a call held for approval waits up to
    ``risk.approval_timeout``, and ecc, not the harness's own timeout, must answer it."""
    timeout = config.risk.get("approval_timeout") if config is not None else None
    return math.ceil(float(timeout or 600)) + HOOK_TIMEOUT_MARGIN


def enforceable(info: HarnessInfo) -> bool:
    return CAPABILITY in info.capabilities


def warning(config: Any, info: HarnessInfo) -> str | None:
    """The line ``ecc run`` prints before starting when the policy asks for enforcement and the
    harness cannot be enforced; None when there is nothing to say."""
    if not config.risk.get("enforce") or enforceable(info):
        return None
    return (
        f"Warning: risk.enforce is on but ecc cannot apply its hook to {info.name} sessions: "
        "their tool calls are scored from the output after they ran, never blocked or held"
    )


def session_directory(session_id: str) -> Path:
    """The private directory holding a session's generated hook settings."""
    return paths.state_dir() / "sessions" / session_id / "hooks"


def audit_enforcement(store: Any, session_id: str, after_id: int) -> None:
    """After a run with ecc's hook applied: record the calls its hook never saw (the output
    parser did). None seen at all means the harness did not run the hook: the session is
    recorded as not enforced, whatever the settings said."""
    calls = [c for c in store.list_tool_calls(session_id) if int(c["id"]) > after_id]
    unhooked = [c for c in calls if c.get("source") == "output"]
    if not unhooked:
        return
    tools = ", ".join(sorted({str(c["tool"]) for c in unhooked}))
    if len(unhooked) == len(calls):
        store.update_session(session_id, enforced=0)
        what = f"the harness never ran ecc's hook: {len(calls)} tool call(s) ({tools}) were "
        what += "scored from its output after they ran; this run was not enforced"
    else:
        what = f"{len(unhooked)} tool call(s) ({tools}) never reached ecc's hook: scored "
        what += "from the output after they ran"
    store.add_event(session_id, "enforcement", what)


def discard_session_files(session_id: str) -> None:
    """Remove what the session's runs kept under ecc's state (the hook settings, an adapter's
    private harness home); never raises. Called when the session is removed, not when a run
    ends: a resume or a follow-up needs what the harness saved there (Gemini CLI keeps its
    chats in the session's private home)."""
    import shutil

    shutil.rmtree(session_directory(session_id).parent, ignore_errors=True)


def for_session(session: Session, info: HarnessInfo, config: Any) -> SessionEnforcement | None:
    """The hook to apply to ``session``'s harness process, or None when its adapter cannot."""
    if not enforceable(info):
        return None
    from ecc.contract.types import SessionEnforcement

    argv = (*ecc_argv(), "hook", "--harness", session.harness, "--managed")
    directory = paths.ensure_private_dir(session_directory(session.id))
    return SessionEnforcement(
        command=shlex.join(argv),
        argv=argv,
        timeout_secs=hook_timeout_secs(config),
        directory=directory,
        env={**_hook_env(session), SESSION_HOOK_ENV: "1"},
    )


def _hook_env(session: Session) -> dict[str, str]:
    return {
        **paths.pinned_environment(),  # the same directories, without platformdirs' imports
        "ECC_SESSION_ID": session.id,
        "ECC_HARNESS": session.harness,
        POLICY_DIR_ENV: str(session.project_dir),
    }


def session_env(session: Session, enforcement: SessionEnforcement | None) -> dict[str, str]:
    """What the harness process inherits so the managed hook finds its session and policy."""
    return dict(enforcement.env) if enforcement is not None else _hook_env(session)
