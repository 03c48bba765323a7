"""The hot path of ``ecc hook``: one harness hook payload in, one protocol answer out.

A harness runs ``ecc hook --harness NAME`` before every tool call, so this path must stay far
under 100 ms and must never break the harness. On a warm start it therefore imports neither
pydantic, stevedore, pluggy, ``dataclasses``, ``typing`` nor the adapter packages: the
configuration is the cached view (:mod:`ecc.runtime.config.view`), and the plugins are the
modules that implement this path's hooks, as a full load recorded them (``PluginSet.for_hooks``;
an adapter's ``integration`` module without its package ``__init__``), called in the order and
with the arguments pluggy used on that load (:mod:`ecc.runtime.plugins.direct`). The adapter
hooks go to the plugins that declare the harness only (``harness_hook``).

Then: parse (adapter) → score (scorers) → decide (``[risk]``) → hold a managed session's
``require_confirmation`` call until a person decides (:mod:`ecc.observability.approvals`) →
answer (adapter) → record (session store, against ``ECC_SESSION_ID`` or unattached). Any
internal error is appended to ``<state dir>/logs/hook.log`` (never the payload: it may hold
secrets) and answered with ``allow``, or ``deny`` when ``risk.fail_closed`` is true. A payload
over ``risk.max_input_bytes`` gets that same fail decision at once, unscored, so the harness's
hook timeout never decides. When the config itself does not load, :mod:`ecc.observability.failsafe`
reads the fail-closed setting on its own (a broken config never weakens a decision).
"""

from __future__ import annotations

import json
import os

from ecc.runtime import paths

TYPE_CHECKING = False  # typing and pathlib stay unimported: this runs before every tool call
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

HOT_HOOKS = ("ecc_parse_hook_payload", "ecc_hook_response", "ecc_score_tool_call")
# Stores a process about to end left open: closing the last connection to a WAL database
# checkpoints it (copies the log into the database and syncs it), about 15 ms of every tool
# call's wait. Left to the exit, the committed row stays in the log for the next checkpoint.
_LEFT_TO_EXIT: list[Any] = []
# Set by the runner of a managed session (``ecc.sessions.enforcement``):
POLICY_DIR_ENV = "ECC_POLICY_DIR"  # the directory ``ecc run`` was invoked in: its policy applies
SESSION_HOOK_ENV = "ECC_SESSION_HOOK"  # "1": the session applies its own (``--managed``) hook


def load(cwd: str | Path | None = None, harness: str | None = None) -> tuple[Any, Any]:
    """(config view, plugin set) for the hook: only the modules implementing its hooks (for
    ``harness``: its own adapter's) when the start-up index has them (``PluginSet.for_hooks``),
    else the process's set."""
    from ecc.runtime.config import view as fastconfig

    config = fastconfig.view(cwd)
    return config, plugins_for(config, harness)


def plugins_for(config: Any, harness: str | None) -> Any:
    from ecc.runtime.plugins import direct

    recorded = direct.from_record(config, HOT_HOOKS, harness)
    if recorded is not None:
        return recorded
    from ecc.runtime.plugins.loader import PluginSet

    return PluginSet.for_hooks(config, HOT_HOOKS, harness)


# -- errors ---------------------------------------------------------------------------------


def log_error(what: str, exc: BaseException | None = None, harness: str = "") -> None:
    """Append one line to ``<state dir>/logs/hook.log``; never raises, never logs payloads."""
    try:
        import time

        directory = paths.ensure_private_dir(os.path.join(paths.directory("state"), "logs"))
        detail = f": {type(exc).__name__}: {exc}" if exc is not None else ""
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} ecc hook"
        line += f" [{harness}]" if harness else ""
        line += f" {what}{detail}".replace("\n", " ")[:2000] + "\n"
        fd = os.open(
            os.path.join(directory, "hook.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
        )
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


# -- the hook -------------------------------------------------------------------------------


def decide(assessment: Any, risk: Any) -> str:
    """``allow``, ``ask`` or ``deny`` for a risk assessment under ``[risk]`` (an ``ask`` of a
    managed session is then held for a person's decision)."""
    if not risk.enforce:
        return "allow"
    if assessment.action == "block":
        return "deny"
    if assessment.action == "require_confirmation":
        return "ask"
    return "allow"


def _generic_response(decision: Any) -> Any:
    """The answer when no adapter answers: exit 2 with the reason on stderr denies in Claude
    Code, Codex and Gemini CLI (and in ecc's OpenCode plugin); exit 0 allows."""
    from ecc.contract.types import HookResponse

    if decision.decision == "deny":
        return HookResponse(exit_code=2, stderr=decision.reason + "\n")
    return HookResponse()


def run(
    harness: str,
    event: str,
    raw: bytes,
    cwd: str | Path | None = None,
    managed: bool = False,
    ending: bool = False,
) -> Any:
    """Handle one hook invocation; always returns a :class:`ecc.contract.types.HookResponse`.

    ``managed`` is the hook a session applied to its own harness process: it reads the policy
    of the directory ``ecc run`` was invoked in. Inside such a session any other ecc hook (one
    the user installed) allows at once and records nothing: the session's hook decides.
    ``ending``: the process ends right after the answer without closing what it opened
    (``ecc hook``'s own process): the store connection is left to that exit, uncheckpointed.
    """
    from ecc.contract.types import HookDecision, HookEvent
    from ecc.runtime.config import view as fastconfig

    if managed:
        policy_dir = os.environ.get(POLICY_DIR_ENV)
        if not policy_dir:  # the worktree's own policy is the agent's to edit: never that one
            why = f"ecc: tool call denied: the session hook has no policy ({POLICY_DIR_ENV} unset)"
            log_error(why, harness=harness)
            failed = HookEvent(harness=harness, event=event, phase="pre_tool")
            return _answer(_default_adapter(harness), HookDecision(failed, "deny", reason=why))
        cwd = policy_dir
    elif os.environ.get(SESSION_HOOK_ENV) == "1":
        from ecc.contract.types import HookResponse

        return HookResponse()

    try:
        config = fastconfig.view(cwd)
    except Exception as exc:
        return _without_config(harness, event, exc, cwd)
    fail_closed = bool(config.risk.fail_closed)
    adapter = None
    try:
        from ecc.observability import failsafe

        failsafe.remember(config.risk, cwd)
        plugin_set = plugins_for(config, harness)
        adapter = plugin_set.harness_hook(harness)
        try:
            payload: Any = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"the hook payload is not JSON ({exc})") from None
        hook_event = adapter.ecc_parse_hook_payload(harness=harness, event=event, payload=payload)
        if hook_event is None:
            raise LookupError(f"no installed adapter handles hook payloads of {harness!r}")
        decision = HookDecision(event=hook_event)
        pre_tool = hook_event.phase == "pre_tool" and hook_event.call is not None
        limit = config.risk.max_input_bytes
        oversized = pre_tool and len(raw) > limit
        if oversized:
            decision = _unscored(hook_event, len(raw), limit, fail_closed)
        elif pre_tool:
            decision = _score(hook_event, config, plugin_set)
            if decision.decision == "ask":
                decision = _hold(decision, config)
        response = adapter.ecc_hook_response(harness=harness, decision=decision)
        if response is None:
            response = _generic_response(decision)
        if pre_tool:  # after the answer: an adapter without "ask" turns it into "deny"
            _record(decision, config, scored=not oversized, ending=ending)
        return response
    except Exception as exc:
        log_error("internal error", exc, harness)
        reason = (
            f"ecc hook failed ({type(exc).__name__}) and risk.fail_closed is set: "
            "tool call denied; see the ecc state dir logs/hook.log"
        )
        failed = HookEvent(harness=harness, event=event, phase="pre_tool")
        return _answer(
            adapter,
            HookDecision(failed, "deny", reason=reason) if fail_closed else HookDecision(failed),
        )


def _answer(adapter: Any, decision: Any) -> Any:
    """The adapter's answer to ``decision`` when it can give one, else the generic one."""
    harness = decision.event.harness
    if adapter is not None:
        try:
            response = adapter.ecc_hook_response(harness=harness, decision=decision)
            if response is not None:
                return response
        except Exception as again:
            log_error("adapter could not answer", again, harness)
    return _generic_response(decision)


def _without_config(harness: str, event: str, error: BaseException, cwd: str | Path | None) -> Any:
    """The answer when the config does not load: denied when the fail-closed setting, read on
    its own, says so or cannot be known under enforcement (:mod:`ecc.observability.failsafe`)."""
    from ecc.contract.types import HookDecision, HookEvent

    deny, why = True, "its fail-closed setting could not be read"
    problem = type(error).__name__
    try:
        from ecc.observability import failsafe

        problem = failsafe.summary(error)
        deny, why = failsafe.verdict(cwd)
    except Exception as exc:  # unreadable even on its own: nothing says it was off
        log_error("could not read the fail-closed setting", exc, harness)
    log_error(f"config error: {problem}; {'denied' if deny else 'allowed'}: {why}", None, harness)
    failed = HookEvent(harness=harness, event=event, phase="pre_tool")
    if not deny:
        return _answer(_default_adapter(harness), HookDecision(failed))
    reason = f"ecc: tool call denied: the ecc config does not load ({problem}) and {why}"
    return _answer(_default_adapter(harness), HookDecision(failed, "deny", reason=reason))


def _default_adapter(harness: str) -> Any:
    """The harness's adapter loaded under the default config, or None: so a broken config is
    still answered in the harness's own protocol."""
    try:
        from ecc.runtime.config import model
        from ecc.runtime.config.view import ConfigView

        defaults = ConfigView(model.Config().model_dump(mode="json"))
        return plugins_for(defaults, harness).harness_hook(harness)
    except Exception as exc:
        log_error("no adapter without a config", exc, harness)
        return None


def _unscored(hook_event: Any, size: int, limit: int, fail_closed: bool) -> Any:
    """The fail decision for a call too large to score in the harness's time."""
    from ecc.contract.types import HookDecision

    why = (
        f"ecc: {hook_event.call.tool} call not scored: its hook input is {size} bytes, over "
        f"risk.max_input_bytes ({limit})"
    )
    verdict = "denied because risk.fail_closed is set" if fail_closed else "allowed unscored"
    log_error(f"{why.removeprefix('ecc: ')}; {verdict}", harness=hook_event.harness)
    reason = f"{why}; {verdict}"
    if fail_closed:
        return HookDecision(hook_event, "deny", reason=reason, reasons=[reason])
    return HookDecision(hook_event, "allow", reasons=[reason])


def _score(hook_event: Any, config: Any, plugin_set: Any) -> Any:
    from ecc.contract.types import HookDecision
    from ecc.observability.risk import assess

    call = hook_event.call
    call.harness = call.harness or hook_event.harness
    call.session_id = call.session_id or os.environ.get("ECC_SESSION_ID") or None
    assessment = assess(call, config, plugin_set.hook)
    for error in assessment.errors:
        log_error(f"risk scorer failed: {error}", harness=hook_event.harness)
    verdict = decide(assessment, config.risk)
    reason = ""
    if verdict != "allow":
        why = "; ".join(r for r in assessment.reasons[1:] or assessment.reasons if r)
        reason = (
            f"ecc: {call.tool} call {'blocked' if verdict == 'deny' else 'needs confirmation'} "
            f"(risk {assessment.score:.2f}, {assessment.action}): {why}"
        )
    decision = HookDecision(
        event=hook_event,
        decision=verdict,
        action=assessment.action,
        score=assessment.score,
        reason=reason,
        reasons=assessment.reasons,
    )
    return decision


def _hold(decision: Any, config: Any) -> Any:
    """A managed session's call that needs confirmation waits for a person's decision
    (:mod:`ecc.observability.approvals`); outside one it is asked: a person is at that
    terminal, and nobody would see the approval."""
    session_id = os.environ.get("ECC_SESSION_ID")
    if not session_id:
        return decision
    import gc

    gc.enable()  # ecc hook turns it off for its milliseconds; a hold may last minutes
    from ecc.observability import approvals

    harness = decision.event.harness
    held = approvals.hold(decision, config, session_id, lambda line: log_error(line, None, harness))
    return held or decision


def _record(decision: Any, config: Any, scored: bool = True, ending: bool = False) -> None:
    """Store the call with its score (None: not scored) and the decision the harness was
    given, as the one row of that call: merged with the session's output record of it, by the
    harness's call id where the payload has one (``Records.record_tool_call``); never raises.
    ``ending``: the store stays open for the process's exit (see :data:`_LEFT_TO_EXIT`)."""
    call = decision.event.call
    try:
        from ecc.store.open import open_store

        store = open_store(config=config)
        recorded = False
        try:
            store.record_tool_call(
                session_id=os.environ.get("ECC_SESSION_ID") or None,
                harness=decision.event.harness,
                tool=call.tool,
                input=call.input,
                score=decision.score if scored else None,
                action=decision.action if scored else None,
                reasons=decision.reasons,
                decision=decision.decision,
                call_id=decision.event.tool_use_id,
                source="hook",
            )
            recorded = True
        finally:
            if ending and recorded and getattr(store, "dialect", "") == "sqlite":
                _LEFT_TO_EXIT.append(store)  # referenced: garbage collection would close it
            else:
                store.close()
    except Exception as exc:  # recording must never change the decision
        log_error("could not record the tool call", exc, decision.event.harness)
