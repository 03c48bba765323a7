"""The harness command of one session run: what the runner starts, and in what environment.

The adapter builds the command (:func:`build` asks its hooks: a resume or follow-up form when
the run continues an earlier one, else the first one) from a :class:`LaunchContext` that holds
the prompt of this turn, the agent profile, ecc's hook (:mod:`ecc.sessions.enforcement`) and the
sessions MCP server (:mod:`ecc.sessions.sessionmcp`). Each choice is an event of the session, so
``ecc status`` shows whether the run is enforced and which servers it has.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions.enforcement import for_session, session_env

if TYPE_CHECKING:
    from ecc.contract.types import HarnessInfo, SessionEnforcement, SessionMcpServer
    from ecc.store.models import Session


@dataclass(frozen=True)
class Launch:
    """A run's command line and environment. ``hooked_after`` is, when ecc's hook applies to
    the harness, the id of the session's last tool call before this run (its calls follow)."""

    argv: list[str]
    env: dict[str, str]
    hooked_after: int | None


def build(store: Any, config: Any, session: Session, working: Path) -> Launch:
    """The command the adapter builds for this run of ``session`` in ``working``."""
    from ecc.contract.types import LaunchContext
    from ecc.runtime.plugins.loader import get_plugins
    from ecc.sessions import harnesses

    hook = get_plugins(config).harness_hook(session.harness)
    info = harnesses.resolve(session.harness, config)
    profile = None
    if session.profile:  # the typed profile adapters expect (pydantic only for these)
        from ecc.runtime.config.model import AgentProfile

        profile = AgentProfile(**session.profile)
    enforcement, hooked_after = _enforcement(store, config, session, info)
    # the prompt: the message ``ecc send`` bound to a follow-up run, else the task
    prompt = store.begin_turn(
        session.id, session.attempts, session.task, followup=session.run_kind == "followup"
    )
    if prompt is None:
        raise EccError("no follow-up message is waiting for this run")
    launch = LaunchContext(
        session_id=session.id,
        task=prompt,
        working_dir=working,
        project_dir=Path(session.repo_root or session.project_dir),
        config=config,
        profile=profile,
        session_name=session.name or "",
        enforcement=enforcement,
        mcp_servers=_mcp_servers(store, config, session, info),
    )
    if profile is not None:
        translation = hook.ecc_translate_profile(
            harness=session.harness, profile=profile, launch=launch
        )
        if translation is not None and translation.refused:
            refused = "; ".join(f"{k}: {v}" for k, v in translation.refused.items())
            raise EccError(f"harness {session.harness} refused profile fields ({refused})")
        if translation is None:
            store.add_event(
                session.id, "profile", f"harness {session.harness} does not map agent profiles"
            )
    argv = None
    if session.run_kind in ("resume", "followup"):
        argv = hook.ecc_resume_command(
            harness=session.harness,
            launch=launch,
            harness_session_id=session.harness_session_id,
        )
    if argv is None:
        argv = hook.ecc_build_command(harness=session.harness, launch=launch)
    if not argv:
        raise EccError(f"no installed adapter builds a command for harness {session.harness!r}")
    env = dict(os.environ)
    env.update(
        ECC_SESSION_ID=session.id,
        ECC_HARNESS=session.harness,
        ECC_WORKING_DIR=str(working),
        ECC_PROJECT_DIR=str(launch.project_dir),
    )
    env.update(session_env(session, enforcement))
    for server in launch.mcp_servers:  # adapters may pass these through by name
        env.update(server.env)
    for extra in hook.ecc_session_env(harness=session.harness, launch=launch):
        if extra:
            env.update({str(k): str(v) for k, v in extra.items()})
    return Launch([str(part) for part in argv], env, hooked_after)


def _enforcement(
    store: Any, config: Any, session: Session, info: HarnessInfo
) -> tuple[SessionEnforcement | None, int | None]:
    """The hook the adapter applies to this run's harness process (or None), recorded on the
    session with whether it enforces (shown by ``ecc status``), and the id of the last call
    before it."""
    enforcement = for_session(session, info, config)
    enforcing = bool(config.risk.enforce)
    enforced = enforcement is not None and enforcing
    store.update_session(session.id, enforced=int(enforced))  # INTEGER in every store
    hooked_after = None
    if enforcement is not None:  # the calls of this run are those after the last one now
        last = store.list_tool_calls(session.id, limit=1)
        hooked_after = int(last[0]["id"]) if last else 0
    if enforcement is None:
        what = f"harness {session.harness} cannot run ecc's hook: calls scored from output"
        if enforcing:
            what += "; risk.enforce cannot block or hold them"
    elif enforcing:
        what = "ecc's hook applied to the harness: risk.enforce blocks and holds tool calls"
    else:
        what = "ecc's hook applied to the harness: tool calls scored, risk.enforce is off"
    store.add_event(session.id, "enforcement", what)
    return enforcement, hooked_after


def _mcp_servers(
    store: Any, config: Any, session: Session, info: HarnessInfo
) -> tuple[SessionMcpServer, ...]:
    """The sessions MCP server for this run's harness (delegation and messages), if any."""
    from ecc.sessions import sessionmcp

    servers = sessionmcp.for_session(session, info, config)
    if servers:
        names = ", ".join(server.name for server in servers)
        store.add_event(session.id, "mcp", f"MCP servers registered: {names}")
    return servers
