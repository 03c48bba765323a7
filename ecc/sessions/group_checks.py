"""A group's check: the command run in a member's worktree when its harness exits on its own.

The runner's three steps at a member's end (:func:`ecc.sessions.ending.run_group_check`): find
the check and mark it running on the store thread, run it here (a process group of its own,
bounded by the group's timeout), keep the result on the member. The check is trusted: it comes
from the user's command line or from a template, and templates are a guarded key.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.store.base import Store
    from ecc.store.models import Session

CHECK_TAIL_CHARS = 4000  # of a check's output kept on the member (the runner reads 8 KiB)


def check_of(store: Store, session: Session) -> dict[str, Any] | None:
    """The check a member session runs when it ends, marked ``running`` on its member (the
    runner's first step of three, on its store thread); None outside a group with a check."""
    found = store.member_check(session.id)
    if found is not None:
        store.update_member(found["group_id"], found["position"], check_state="running")
    return found


def run_check(check: dict[str, Any], session: Session) -> dict[str, Any]:
    """Run ``check`` (from :func:`check_of`) in the session's worktree (or directory), in a
    process group of its own ended at its exit or its timeout; returns the result columns."""
    from ecc.sessions.provision import run_setup

    where = Path(session.worktree_path or session.working_dir)
    env = {
        **os.environ,
        "ECC_SESSION_ID": session.id,
        "ECC_GROUP_ID": check["group_id"],
        "ECC_WORKING_DIR": str(where),
        "ECC_PROJECT_DIR": session.project_dir,
    }
    started = time.monotonic()
    code: int | None
    try:
        code, seconds, tail = run_setup(
            where, check["check_command"], float(check["check_timeout_secs"]), env
        )
    except OSError as exc:
        code, seconds, tail = None, time.monotonic() - started, f"could not run the check: {exc}"
        state = "error"
    else:
        state = "timeout" if code is None else "passed" if code == 0 else "failed"
    return {
        "check_state": state,
        "check_exit_code": code,
        "check_seconds": round(seconds, 3),
        "check_output": tail[-CHECK_TAIL_CHARS:],
    }


def record_check(
    store: Store, session: Session, check: dict[str, Any], result: dict[str, Any]
) -> None:
    """Keep the check's result on the member and as an event of the session."""
    store.update_member(check["group_id"], check["position"], **result)
    code = result["check_exit_code"]
    store.add_event(
        session.id,
        "check",
        f"check {result['check_state']}" + (f" (exit code {code})" if code is not None else ""),
        {"group": check["group_id"], "command": check["check_command"], "exit_code": code},
    )
