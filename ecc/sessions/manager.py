"""Session operations the CLI, the daemon and (later) the remote API share.

create -> submit (through the executor) -> stop / resume / send (a follow-up) / remove, plus id
generation and lookup by id, prefix or ``latest``. Every state change goes through
``Store.transition``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions import child_results, procs
from ecc.sessions.executor import get_executor
from ecc.store.base import IdCollision
from ecc.store.models import ACTIVE, TERMINAL, InvalidTransition, Session, State, age_seconds

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store

ID_BYTES = 6  # 12 hex digits; any unique prefix of 4+ digits addresses a session
MIN_PREFIX = 4
SLOT_CLAIM_GRACE_SECS = 10.0  # a dispatched runner claims its session well within this


def new_id() -> str:
    return os.urandom(ID_BYTES).hex()  # secrets.token_hex, without importing secrets (hashlib)


def find(store: Store, ref: str) -> Session:
    """The session ``ref`` names: an id, a unique prefix (4+ characters), or ``latest``."""
    ref = ref.strip()
    if not ref:
        raise EccError("a session id is required")
    if ref == "latest":
        latest = store.latest_session()
        if latest is None:
            raise EccError("there are no sessions yet")
        return latest
    exact = store.get_session(ref)
    if exact is not None:
        return exact
    if len(ref) < MIN_PREFIX:
        raise EccError(f"session id prefix {ref!r} is too short (at least {MIN_PREFIX} characters)")
    matches = store.ids_with_prefix(ref)
    if not matches:
        raise EccError(f"no session matches {ref!r}")
    if len(matches) > 1:
        listed = "; ".join(f"{m['id']} [{m['state']}] {m['task'][:40]}" for m in matches[:10])
        raise EccError(f"session id {ref!r} is ambiguous: {listed}")
    found = store.get_session(matches[0]["id"])
    assert found is not None
    return found


@dataclass
class Request:
    """What ``ecc run`` asks for (also what a remote request or a schedule would carry)."""

    task: str
    harness: str | None = None
    profile: str | None = None
    use_worktree: bool | None = None
    name: str = ""
    cwd: Path | None = None
    executor: str | None = None
    parent: str | None = None  # the session that starts this one (ecc.sessions.delegation)


def create(store: Store, request: Request, config: Config) -> Session:
    """Validate ``request`` and insert a pending session; nothing is started yet."""
    from ecc.runtime.config.profiles import resolve_profile
    from ecc.sessions import harnesses

    task = request.task.strip()
    if not task:
        raise EccError("the task must not be empty")
    cwd = (request.cwd or Path.cwd()).expanduser()
    if not cwd.is_dir():
        raise EccError(f"directory {cwd} does not exist")
    cwd = cwd.resolve()
    profile_name = request.profile or config.default_profile
    profile = resolve_profile(config.agent_profiles, profile_name) if profile_name else None
    wanted = request.harness or (profile or {}).get("harness") or config.default_harness
    if not wanted:
        detected = harnesses.detect(cwd, config)
        if not detected:
            raise EccError(
                "no harness given and none detected in this project: pass --harness NAME "
                "or set default_harness"
            )
        wanted = detected[0]
    harness = harnesses.canonical_name(wanted, config)
    use_worktree = (
        config.auto_create_worktrees if request.use_worktree is None else request.use_worktree
    )
    fields: dict[str, Any] = {
        "name": request.name.strip(),
        "profile_name": profile_name,
        "profile_json": json.dumps(profile, separators=(",", ":")) if profile else None,
        "executor": request.executor or config.executor,
        "project_dir": str(cwd),
        "working_dir": str(cwd),
        "use_worktree": int(use_worktree),
    }
    if request.parent:
        fields["parent_id"] = request.parent
    executor = get_executor(fields["executor"], config)  # refuse an unknown one before writing
    if use_worktree:
        from ecc.sessions import worktrees

        repo = worktrees.repo_info(cwd)
        fields.update(
            repo_root=str(repo.root), base_commit=repo.head_commit, base_branch=repo.head_branch
        )
        if getattr(executor, "remote", False):
            # A worker elsewhere checks out the exact base commit from the repository's remote.
            fields["repo_url"] = worktrees.remote_url(repo.root)
    for _ in range(5):
        try:
            return store.insert_session(
                new_id(),
                task=task,
                harness=harness,
                state=State.PENDING,
                reason="created",
                **fields,
            )
        except IdCollision:
            continue
    raise EccError("could not allocate a unique session id")


def submit(store: Store, session: Session, config: Config | None = None) -> None:
    """Hand the session to its executor; a failure to start is recorded, never left pending."""
    try:
        get_executor(session.executor, config).submit(session)
    except EccError as exc:
        store.transition(session.id, State.FAILED, str(exc))
        raise


def dispatch_queued(store: Store, config: Config) -> list[str]:
    """Give free slots to queued sessions, oldest first, then start the follow-ups waiting for
    a finished run (:func:`deliver_queued`); returns the ids started.

    Safe to run in several processes at once (two runners ending together, a read that found
    a dead runner, the daemon): a runner is started only by whoever wins the session's slot
    claim. A session already holding a slot without a live runner is started again only once
    its claim is older than :data:`SLOT_CLAIM_GRACE_SECS` (the runner started for it died
    before claiming it); before that, that runner is still starting.
    """
    started = []
    wt, total = config.max_parallel_worktrees, config.max_parallel_sessions
    for session in store.queued_sessions():
        if session.stop_requested:
            continue
        deciding = session.runner_pid is not None and procs.alive(
            session.runner_pid, session.runner_token
        )
        if session.slot:  # taken for it already, by its own runner or by another dispatcher
            if deciding or (age_seconds(session.updated_at) or 0.0) <= SLOT_CLAIM_GRACE_SECS:
                continue
        elif not store.claim_slot(session.id, wt, total) or deciding:
            continue  # no slot; or its runner is still deciding and will find the slot taken
        submit(store, session, config)
        started.append(session.id)
    return started + deliver_queued(store, config)


def exit_status(session: Session) -> int:
    """The exit code ``ecc run`` reports for a finished session."""
    if session.state == State.COMPLETED:
        return 0
    if session.exit_code:
        return session.exit_code
    if session.exit_signal:
        return 128 + session.exit_signal
    return 1


def stop(
    store: Store,
    session: Session,
    config: Config,
    grace: float | None = None,
    wait: float | None = None,
) -> Session:
    """Stop a session: the store flag, a nudge to its runner, and (if the runner is gone) the
    kill of the harness's process group here. Never touches the worktree or its branch.
    ``wait`` (default: the grace and 10 s) bounds the wait for a local runner to end the
    harness; one that has, and is still storing its output, is waited for as it stores."""
    if session.state in TERMINAL:
        raise EccError(f"session {session.id} is already {session.state.value}")
    grace = config.stop_grace_secs if grace is None else grace
    if grace < 0:
        raise EccError("--grace must not be negative")
    store.request_stop(session.id, grace)
    executor = get_executor(session.executor, config)
    not_started = session.state in (State.PENDING, State.QUEUED) and session.harness_pid is None
    if executor.is_local(session):
        unclaimed = not procs.alive(session.runner_pid, session.runner_token)
    else:  # a worker elsewhere; the flag set above makes its claim refuse from now on
        unclaimed = session.runner_pid is None
    if not_started and unclaimed:
        _record_stop(store, session.id, "stopped before it started", config)
        return _reload(store, session.id)
    if executor.interrupt(session) or not executor.is_local(session):
        deadline = time.monotonic() + (grace + 10.0 if wait is None else wait)
        while time.monotonic() < deadline:
            current = _reload(store, session.id)
            if current.state in TERMINAL:
                return current
            time.sleep(0.05)
        if not executor.is_local(session):
            return _reload(store, session.id)
        current = _storing_runner(store, session.id, config)
        if current.state in TERMINAL:
            return current
    # The runner is gone (or did not react): end the process group ourselves.
    current = _reload(store, session.id)
    how = ""
    if current.harness_pgid and (
        procs.alive(current.harness_pid, current.harness_token)
        or procs.group_alive(current.harness_pgid)
    ):
        how = procs.terminate_group(current.harness_pgid, grace)
    if current.state in TERMINAL:
        return current
    reason = "stopped on request" + (f" ({how} by ecc stop; runner absent)" if how else "")
    _record_stop(store, session.id, reason, config)
    return _reload(store, session.id)


def _storing_runner(store: Store, session_id: str, config: Config) -> Session:
    """The session once its runner records the end, while that runner lives and the harness it
    started has ended with its group: the runner took the stop and is storing what the harness
    printed before it, which a loaded store can take longer than the wait for the record (a
    flood's backlog on a busy PostgreSQL). Its record, not a second one of ours, ends the
    session, within the bound the runner itself gives that output."""
    from ecc.sessions.runoutput import output_wait_secs

    bound = time.monotonic() + output_wait_secs(config)
    while True:
        current = _reload(store, session_id)
        if current.state in TERMINAL or time.monotonic() >= bound:
            return current
        if not procs.alive(current.runner_pid, current.runner_token):
            return current
        if not current.harness_pgid or procs.group_alive(current.harness_pgid):
            return current  # no harness started, or the runner did not end it: we do
        time.sleep(0.05)


def _record_stop(store: Store, session_id: str, reason: str, config: Config) -> None:
    """Stopped by us (no runner did it): record it unless the session ended meanwhile (a read
    that found its runner dead), and hand the slot it may have held to a queued session."""
    try:
        store.transition(session_id, State.STOPPED, reason, expect=sorted(ACTIVE), harness_pid=None)
    except InvalidTransition:
        return
    child_results.tell_parent(store, session_id)  # no runner will: a delegated child's parent waits
    try:
        dispatch_queued(store, config)
    except EccError:
        pass  # that session's own failure to start is recorded on it


def resume(store: Store, session: Session, config: Config) -> Session:
    """Continue a finished session in the same worktree through the adapter's resume command.

    A completed session continues its conversation where the harness can (``claude --resume``,
    ``codex exec resume`` with the captured harness session id), its task as the prompt again;
    ``shell`` runs its task again. A new instruction instead is :func:`send`.
    """
    if session.state in ACTIVE:
        raise EccError(f"session {session.id} is {session.state.value}; stop it before resuming")
    _check_restartable(store, session, config, f"resume session {session.id}")
    resumed = _restart(store, session, "resume", "resumed on request")
    submit(store, resumed, config)
    return resumed


def _check_restartable(store: Store, session: Session, config: Config, what: str) -> None:
    """Refuse a new run of a finished session that could not start: a live harness process, a
    working directory or worktree gone for good, or a used-up budget (``budget_action``)."""
    if getattr(get_executor(session.executor, config), "remote", False):
        pass  # a worker recreates the worktree from the pushed branch (or the base commit)
    elif (
        session.harness_pgid
        and procs.group_alive(session.harness_pgid)
        and procs.alive(session.harness_pid, session.harness_token)
    ):
        raise EccError(f"session {session.id} still has a live harness process; stop it first")
    elif not session.use_worktree and not Path(session.working_dir).is_dir():
        raise EccError(f"working directory {session.working_dir} no longer exists")
    elif (
        session.use_worktree and session.worktree_path and not Path(session.worktree_path).is_dir()
    ):
        from ecc.sessions import worktrees

        repo = Path(session.repo_root or session.project_dir)
        if not worktrees.branch_exists(repo, session.worktree_branch or ""):
            raise EccError(
                f"the worktree and branch of session {session.id} are gone; nothing to resume"
            )
    from ecc.observability import budgets

    budgets.refuse_start(store, config, session, what=what)


def _restart(store: Store, session: Session, run_kind: str, reason: str) -> Session:
    """Move a finished session back to pending for a new run of ``run_kind`` (compare-and-set:
    :class:`InvalidTransition` when another process started it first)."""
    store.transition(
        session.id,
        State.PENDING,
        reason,
        expect=[State.FAILED, State.STOPPED, State.COMPLETED],
        run_kind=run_kind,
        stop_requested=0,
        stop_grace=None,
        runner_pid=None,
        runner_token=None,
        harness_pid=None,
        exit_code=None,
        exit_signal=None,
        ended_at=None,
    )
    return _reload(store, session.id)


MAX_MESSAGE_BYTES = 65536  # a follow-up reaches the harness as one argv element (128 KiB max)


class InvalidMessage(EccError):
    """A follow-up ecc refuses for its text: empty, too long, not UTF-8, a NUL."""


def check_message(text: str) -> str:
    """The follow-up ``text`` as it will be sent (stripped), or :class:`InvalidMessage`."""
    text = text.strip()
    if not text:
        raise InvalidMessage("the message must not be empty")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidMessage("the message must be valid UTF-8 text") from None
    if size > MAX_MESSAGE_BYTES:
        raise InvalidMessage(f"the message is {size} bytes; at most {MAX_MESSAGE_BYTES} bytes")
    if "\x00" in text:
        raise InvalidMessage("the message must not contain NUL characters")
    return text


def send(
    store: Store, session: Session, text: str, config: Config
) -> tuple[Session, dict[str, Any]]:
    """Give the session's agent ``text`` as its next instruction (``ecc send``); returns the
    session and the message (``status`` ``sent``, or ``queued``).

    The run continues the harness's own conversation (its resume, with the session id it
    reported) in the same working directory or worktree. A finished session starts that run at
    once, as :func:`resume` does (executor, slots, budgets); an active one keeps the message
    queued until its run ends (:func:`deliver_queued`); queued messages go out one run each, in
    order. A stopped session keeps its queue until it runs again. Refused with nothing written:
    an empty or oversized message, or a session whose harness reported no session id (a
    follow-up must continue a conversation, never start one without its context).
    """
    text = check_message(text)
    if not session.harness_session_id:
        if session.state in ACTIVE:
            raise EccError(
                f"session {session.id} has not reported its harness's session id yet; "
                "send again once it has"
            )
        raise EccError(
            f"session {session.id} has no conversation to continue: harness {session.harness} "
            "reported no session id of its own (ecc resume runs its task again)"
        )
    if session.state in TERMINAL:
        _check_restartable(store, session, config, f"send to session {session.id}")
    message = store.queue_message(session.id, text)
    current = _reload(store, session.id)
    if current.state in TERMINAL:
        try:
            current = _deliver(store, current, config) or _reload(store, session.id)
        except EccError:
            if session.state in TERMINAL:
                raise
            # it ended just now and cannot run again yet: the message stays queued
    return current, store.get_message(message["id"]) or message


def sent_outcome(session_id: str, state: str, status: str) -> str:
    """One line saying what became of a message :func:`send` took (every front prints it)."""
    if status != "queued":
        return f"Message sent to session {session_id}: a follow-up run started"
    if state in TERMINAL:
        return f"Message queued for session {session_id} (it could not run yet)"
    return f"Message queued for session {session_id}: delivered when its current run ends"


def deliver_queued(store: Store, config: Config) -> list[str]:
    """Start the next run of each completed or failed session with a queued follow-up; returns
    their ids. One that cannot start (a budget, its worktree gone) keeps its queue."""
    started = []
    for session_id in store.queued_followups():
        session = store.get_session(session_id)
        if session is None or session.state not in (State.COMPLETED, State.FAILED):
            continue
        try:
            if _deliver(store, session, config) is not None:
                started.append(session_id)
        except EccError:
            continue  # its own failure to start is recorded on it; a refusal keeps the queue
    return started


def _deliver(store: Store, session: Session, config: Config) -> Session | None:
    """Start the follow-up run that takes the session's oldest queued message; None when
    another process started the session first (the message then waits for that run)."""
    _check_restartable(store, session, config, f"send to session {session.id}")
    try:
        started = _restart(store, session, "followup", "follow-up message")
    except InvalidTransition:
        return None
    if store.bind_followup(session.id) is None:  # taken meanwhile: nothing left to say
        store.transition(session.id, State.FAILED, "no follow-up message to deliver")
        return None
    submit(store, started, config)
    return _reload(store, session.id)


def remove(store: Store, session: Session, config: Config) -> dict[str, Any]:
    """Forget a finished session; its worktree goes if clean, its branch only if merged."""
    if session.state in ACTIVE:
        raise EccError(f"session {session.id} is {session.state.value}; stop it first")
    result: dict[str, Any] = {"id": session.id, "worktree": None}
    if session.worktree_path and session.worktree_branch:
        from ecc.sessions import worktrees

        repo = Path(session.repo_root or session.project_dir)
        if repo.is_dir():
            path = Path(session.worktree_path)
            if path.is_dir() and worktrees.dirty_files(path):
                raise EccError(
                    f"the worktree {path} has uncommitted changes; commit or discard them first"
                )
            base = session.base_branch or session.base_commit
            outcome = worktrees.remove(repo, path, session.worktree_branch, base)
            result["worktree"] = outcome.as_dict()
    store.delete_session(session.id)
    from ecc.sessions.enforcement import discard_session_files

    discard_session_files(session.id)
    return result


def _reload(store: Store, session_id: str) -> Session:
    found = store.get_session(session_id)
    if found is None:
        raise EccError(f"session {session_id} disappeared")
    return found


def wait_for(store: Store, session_id: str, timeout: float, poll: float = 0.05) -> Session:
    """Poll until the session is terminal or ``timeout`` passes (tests, demo, ``run``)."""
    deadline = time.monotonic() + timeout
    while True:
        current = _reload(store, session_id)
        if current.state in TERMINAL or time.monotonic() >= deadline:
            return current
        time.sleep(poll)
