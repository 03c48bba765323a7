"""Approvals: a ``require_confirmation`` call held until a person allows or denies it.

With ``risk.enforce``, ``ecc hook`` does not answer such a call of a managed session (one named
by ``ECC_SESSION_ID``) with the harness's "ask", which a headless agent takes as a denial:
:func:`hold` records an approval in the store, sends ``approval_request`` through the notifiers
and waits, polling the store, until someone decides (``ecc approve``/``ecc deny``, the
dashboard, ``POST /v1/approvals/{id}``: each through :func:`decide`) or ``risk.approval_timeout``
passes, which records ``risk.approval_timeout_decision`` decided by ``timeout``. A hook ended
by a signal while holding records a deny. A call outside a managed session (an interactive
Claude Code) is asked as before: a person is at that terminal.

While held, every view shows the session ``waiting`` (``Session.display_state``, from the
pending approval each session read carries). Only one decision is ever recorded, with who made
it and when; deciding one already decided or timed out is refused (:class:`AlreadyDecided`).

The input excerpt shown to people and notifiers is bounded, sanitised and has common
credential shapes masked: an agent's tool input is untrusted and may hold secrets.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ecc.contract.types import HookDecision, Notification
    from ecc.store.base import Store

DECISIONS = ("allow", "deny")
EXCERPT_CHARS = 300
MAX_REASON_CHARS = 1000
POLL_SECS = 0.25
NOTIFY_JOIN_SECS = 5.0  # how long a decided hold waits for notifications still in flight

_SECRETS = (
    # known token shapes (GitHub, OpenAI-style, Slack, AWS access key ids, GitLab)
    (
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{16,}|sk-[A-Za-z0-9_-]{16,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[\w-]{16,})"
        ),
        "***",
    ),
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[\w.~+/=-]{8,}"), r"\1\2***"),
    (re.compile(r"(://[^:/@\s]+:)[^@\s]+@"), r"\1***@"),
    (
        re.compile(
            r"(?i)\b((?:password|passwd|secret|token|api[_-]?key|access[_-]?key)[\w-]*"
            r"[\"']?\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&|]+)"
        ),
        r"\1***",
    ),
)


class AlreadyDecided(EccError):
    """The approval was decided (or timed out) before this decision."""


class UnknownApproval(EccError):
    """No approval has that id (or id prefix)."""


# -- what people see -----------------------------------------------------------------------------


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """One line of a tool call's input for people: the command or path when there is one,
    sanitised, credentials masked, at most ``limit`` characters."""
    import json

    from ecc.runtime.terminal import sanitize

    text: Any = value
    if isinstance(value, dict):
        for key in ("command", "file_path", "filePath", "path", "url"):
            if isinstance(value.get(key), str):
                text = value[key]
                break
        else:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    text = str(text)[: limit * 8]  # bounded before the patterns run; masked before the cut
    text = " ".join(sanitize(text).split())
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def answer_commands(approval_id: str) -> dict[str, str]:
    return {
        "approve": f"ecc approve {approval_id}",
        "deny": f"ecc deny {approval_id} --reason TEXT",
        "remote": f"POST /v1/approvals/{approval_id}",
    }


def notification(approval: dict[str, Any]) -> Notification:
    """The ``approval_request`` event of a held call: what it is and how to answer."""
    from ecc.contract.types import Notification

    aid, tool = approval["id"], approval["tool"]
    answers = answer_commands(aid)
    why = "; ".join(r for r in approval["reasons"] if r)
    score = approval["score"]
    risk = f"risk {score:.2f}, " if score is not None else ""
    body = (
        f"{tool}: {approval['input_excerpt']}\n({risk}{approval['action']}) {why}\n"
        f"Answer with `{answers['approve']}` or `{answers['deny']}` (or the dashboard, or "
        f"{answers['remote']}); without an answer by {approval['expires_at']} it is "
        f"{'allowed' if approval['on_timeout'] == 'allow' else 'denied'}."
    )
    return Notification(
        event="approval_request",
        title=f"ecc: approve {tool} in session {approval['session_id']}?",
        body=body,
        session_id=approval["session_id"],
        data={
            "approval_id": aid,
            "harness": approval["harness"],
            "tool": tool,
            "input_excerpt": approval["input_excerpt"],
            "score": score,
            "action": approval["action"],
            "reasons": approval["reasons"],
            "expires_at": approval["expires_at"],
            "on_timeout": approval["on_timeout"],
            **answers,
        },
    )


def person() -> str:
    """The OS user deciding (what a CLI decision records as ``decided_by``)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


# -- listing and deciding (every front) -------------------------------------------------------


def pending(store: Store, session_id: str | None = None) -> list[dict[str, Any]]:
    """Undecided approvals still in time, oldest first (overdue ones get their timeout
    decision first)."""
    store.expire_approvals()
    return store.list_approvals(session_id=session_id)


def history(store: Store, limit: int | None = None) -> list[dict[str, Any]]:
    store.expire_approvals()
    return store.list_approvals(pending=False, limit=limit)


def find(store: Store, ref: str) -> dict[str, Any]:
    """The approval whose id is ``ref`` or starts with it."""
    found = store.get_approval(ref)
    if found is not None:
        return found
    matches = store.approvals_with_prefix(ref, limit=2) if len(ref) >= 4 else []
    if not matches:
        raise UnknownApproval(f"no approval matches {ref!r} (ecc approvals lists the pending ones)")
    if len(matches) > 1:
        raise EccError(f"approval id prefix {ref!r} is ambiguous")
    return matches[0]


def clean_reason(reason: str | None) -> str:
    """A person's reason as one line of text; refused when too long (it reaches the agent)."""
    from ecc.runtime.terminal import sanitize

    text = " ".join(sanitize(reason or "").split())
    if len(text) > MAX_REASON_CHARS:
        raise EccError(f"the reason is longer than {MAX_REASON_CHARS} characters")
    return text


def decide(
    store: Store, ref: str, decision: str, decided_by: str, reason: str | None = None
) -> dict[str, Any]:
    """Record a person's ``allow`` or ``deny`` of the pending approval ``ref``; returns it
    decided. :class:`AlreadyDecided` when it was decided or timed out first."""
    if decision not in DECISIONS:
        raise EccError(f"unknown decision {decision!r} (allow or deny)")
    text = clean_reason(reason)
    store.expire_approvals()
    approval = find(store, ref)
    if approval["decision"] is None and store.decide_approval(
        approval["id"], decision, decided_by, text
    ):
        decided = store.get_approval(approval["id"])
        assert decided is not None
        return decided
    current = store.get_approval(approval["id"]) or approval
    raise AlreadyDecided(
        f"approval {current['id']} was already decided: {current['decision']} by "
        f"{current['decided_by']} at {current['decided_at']}"
    )


# -- the hold (``ecc hook``) ------------------------------------------------------------------


class _Ended(BaseException):
    """A signal ended the hook while it held a call."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def hold(
    decision: HookDecision, config: Any, session_id: str, log: Callable[[str], None]
) -> HookDecision | None:
    """Hold ``decision`` (an ``ask`` under enforcement) of session ``session_id`` until a
    person or the timeout decides; the decision the harness gets, or None when it cannot be
    held (no such session, no store): then it is asked as before. ``log`` takes error lines."""
    import secrets

    from ecc.store.open import open_store

    call = decision.event.call
    if call is None:
        return None
    timeout = float(config.risk.get("approval_timeout") or 600)
    on_timeout = str(config.risk.get("approval_timeout_decision") or "deny")
    try:
        store = open_store(config=config)
    except Exception as exc:
        log(f"cannot hold the call for approval, asking instead: {type(exc).__name__}: {exc}")
        return None
    try:
        try:
            approval = store.create_approval(
                secrets.token_hex(6),
                session_id=session_id,
                harness=decision.event.harness,
                tool=call.tool,
                input_excerpt=excerpt(call.input),
                score=decision.score,
                action=decision.action,
                reasons=decision.reasons,
                timeout_secs=timeout,
                on_timeout=on_timeout,
            )
        except Exception as exc:
            log(f"cannot hold the call for approval, asking instead: {type(exc).__name__}: {exc}")
            return None
        if approval is None:
            return None  # not a session of this store: nobody would see the approval
        sender = _notify(approval, config, log)
        ended: _Ended | None = None
        try:
            with _signals_end_the_hold():
                final = _wait(store, approval, session_id, timeout, log)
        except _Ended as signal_ended:
            ended = signal_ended
            final = _record_end(store, approval, signal_ended.signum, log)
        sender.join(NOTIFY_JOIN_SECS)
    finally:
        store.close()
    if ended is not None:
        _die_of(ended.signum)
    return _answer(decision, final, timeout)


def _notify(approval: dict[str, Any], config: Any, log: Callable[[str], None]) -> Any:
    """Send ``approval_request`` in a thread (the hold starts at once); its warnings go to
    ``log``, never to stderr, which the harness shows the agent."""
    import logging
    import threading

    class ToLog(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            log(record.getMessage())

    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(ToLog())

    def send() -> None:
        try:
            from ecc.observability import notify

            notify.send(notification(approval), config)
        except Exception as exc:  # a notifier must never decide the call
            log(f"approval_request not sent: {type(exc).__name__}: {exc}")

    thread = threading.Thread(target=send, name="ecc-approval-notify", daemon=True)
    thread.start()
    return thread


@contextmanager
def _signals_end_the_hold() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT raise :class:`_Ended` while the hold lasts (main thread)."""
    import signal
    import threading

    saved: dict[signal.Signals, Any] = {}

    def ended(signum: int, frame: Any) -> None:
        raise _Ended(signum)

    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            saved[number] = signal.signal(number, ended)
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def _wait(
    store: Store,
    approval: dict[str, Any],
    session_id: str,
    timeout: float,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Poll until the approval is decided; decide it on timeout or when the session ended."""
    from ecc.store.models import now_iso

    aid = approval["id"]
    give_up = time.monotonic() + timeout + 30  # the store itself failing for that long
    failures = 0
    while True:
        try:
            current = store.get_approval(aid)
            if current is None:  # forgotten meanwhile: nobody can decide it any more
                return {**approval, "decision": "deny", "decided_by": "ecc", "reason": "lost"}
            if current["decision"] is not None:
                return current
            if now_iso() >= current["expires_at"]:
                store.expire_approvals()
                continue
            session = store.get_session(session_id)
            if session is None or session.terminal:
                store.decide_approval(aid, "deny", "ecc", "its session is no longer running")
                continue
            failures = 0
        except Exception as exc:  # a locked or lost store: keep holding, say so once a while
            failures += 1
            if failures in (1, 20):
                log(f"approval {aid}: store read failed: {type(exc).__name__}: {exc}")
            if time.monotonic() > give_up:
                verdict = approval["on_timeout"]
                return {**approval, "decision": verdict, "decided_by": "timeout", "reason": ""}
        time.sleep(POLL_SECS)


def _record_end(
    store: Store, approval: dict[str, Any], signum: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """The hook was ended while holding: record a deny unless someone decided first."""
    import signal

    name = signal.Signals(signum).name
    try:
        store.decide_approval(
            approval["id"], "deny", "hook", f"the hook was ended by {name} before a decision"
        )
    except Exception as exc:
        log(f"approval {approval['id']}: could not record the end: {exc}")
    return {**approval, "decision": "deny", "decided_by": "hook", "reason": name}


def _die_of(signum: int) -> None:
    """End this process by ``signum``, as it would have without the hold's handler."""
    import signal

    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # not reached unless the signal is blocked


def _answer(decision: HookDecision, approval: dict[str, Any], timeout: float) -> HookDecision:
    """The hook's decision after the hold, with the reason the agent (and the log) gets."""
    from ecc.contract.types import HookDecision

    tool = decision.event.call.tool if decision.event.call else "tool"
    verdict = approval["decision"] if approval["decision"] in DECISIONS else "deny"
    who = approval.get("decided_by") or "?"
    if who == "timeout":
        done = "allowed" if verdict == "allow" else "denied"
        reason = (
            f"ecc: {tool} call {done}: no decision within {timeout:g} s "
            f"(risk.approval_timeout; approval {approval['id']})"
        )
    else:
        done = "approved" if verdict == "allow" else "denied"
        reason = f"ecc: {tool} call {done} by {who} (approval {approval['id']})"
        if approval.get("reason"):
            reason += f": {approval['reason']}"
    return HookDecision(
        event=decision.event,
        decision=verdict,
        action=decision.action,
        score=decision.score,
        reason=reason,
        reasons=[*decision.reasons, reason],
    )
