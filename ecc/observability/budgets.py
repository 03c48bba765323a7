"""Token and cost budgets: accounting of the usage adapters parse, alerts, and the limit action.

Limits (0 = none):

* overall: ``token_budget`` and ``cost_budget_usd``, over every session in the store;
* per session: ``session_token_budget`` and ``session_cost_budget_usd``, overridden by the
  session's profile (``token_budget``, ``max_budget_usd``).

A meter's state follows the reference: budget ≤ 0 → ``unconfigured``; used/limit ≥ 1 →
``over_budget``; ≥ critical / warning / advisory (``[budget_alert_thresholds]``, default
0.9 / 0.75 / 0.5) → ``alert90`` / ``alert75`` / ``alert50`` (labels use the configured
percentages); else ``normal``. A scope's state is the worst of its token and cost meters.

:func:`record_usage` is how the runner feeds usage in: an adapter marks usage that is a running
total (``cumulative: True``, e.g. Codex's thread usage) and only its growth is added, so nothing
is counted twice. :func:`check` is called by the runner (after usage) and by the daemon (each
pass), never by listing commands: when a scope's state rises to a new alert level a
``budget_alert`` notification is sent once (the last level alerted is kept beside the store, so
runner and daemon processes never repeat one), and at ``over_budget`` with
``budget_action = "stop"`` the sessions concerned are asked to stop (the store's stop flag,
which their runners obey), with an event naming the budget and its figures.

With ``budget_action = "stop"``, :func:`refuse_start` also keeps a session from starting (or
resuming) while a budget it counts against is used up: a session that could only be stopped at
its first usage line would still spend that first turn.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from ecc.store.base import Store

LEVELS = ("unconfigured", "normal", "advisory", "warning", "critical", "over_budget")


@dataclass
class Meter:
    used: float
    limit: float
    level: int  # index in LEVELS

    def as_dict(self, thresholds: Any) -> dict[str, Any]:
        return {
            "used": self.used,
            "limit": self.limit or None,
            "fraction": round(self.used / self.limit, 4) if self.limit > 0 else None,
            "state": label(self.level, thresholds),
        }


def label(level: int, thresholds: Any) -> str:
    name = LEVELS[level]
    if name in {"advisory", "warning", "critical"}:
        return f"alert{round(getattr(thresholds, name) * 100)}"
    return name


def meter(used: float, limit: float, thresholds: Any) -> Meter:
    if limit <= 0:
        return Meter(used, 0, 0)
    ratio = used / limit
    if ratio >= 1.0:
        level = 5
    elif ratio >= thresholds.critical:
        level = 4
    elif ratio >= thresholds.warning:
        level = 3
    elif ratio >= thresholds.advisory:
        level = 2
    else:
        level = 1
    return Meter(used, limit, level)


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def session_limits(session: Any, config: Any) -> tuple[int, float]:
    """(token limit, cost limit) for one session: its profile's, else the config's."""
    profile = _field(session, "profile") or {}
    if not isinstance(profile, dict):
        profile = {}
    tokens = profile.get("token_budget") or config.session_token_budget or 0
    cost = profile.get("max_budget_usd") or config.session_cost_budget_usd or 0.0
    return int(tokens), float(cost)


def _tokens(row: Any) -> int:
    return int(_field(row, "input_tokens", 0) or 0) + int(_field(row, "output_tokens", 0) or 0)


def overall(store: Store, config: Any) -> dict[str, Any]:
    totals = store.usage_totals()
    thresholds = config.budget_alert_thresholds
    tokens = meter(_tokens(totals), config.token_budget, thresholds)
    cost = meter(float(totals["cost_usd"] or 0.0), config.cost_budget_usd, thresholds)
    level = max(tokens.level, cost.level)
    return {
        "sessions": totals["sessions"],
        "tokens": tokens.as_dict(thresholds),
        "cost_usd": cost.as_dict(thresholds),
        "state": label(level, thresholds),
        "level": level,
    }


def for_session(session: Any, config: Any, usage: Any = None) -> dict[str, Any]:
    """A session's meters; ``usage`` (its family's, :func:`family`) is what counts against its
    limits when given, else its own usage."""
    thresholds = config.budget_alert_thresholds
    counted = session if usage is None else usage
    token_limit, cost_limit = session_limits(session, config)
    tokens = meter(_tokens(counted), token_limit, thresholds)
    cost = meter(float(_field(counted, "cost_usd", 0.0) or 0.0), cost_limit, thresholds)
    level = max(tokens.level, cost.level)
    state = _field(session, "state")
    return {
        "id": _field(session, "id"),
        "state": getattr(state, "value", state),
        "tokens": tokens.as_dict(thresholds),
        "cost_usd": cost.as_dict(thresholds),
        "budget_state": label(level, thresholds),
        "level": level,
    }


def family(store: Store, session: Any) -> dict[str, Any]:
    """The usage a session's budget covers: its own and its children's (theirs, and so on);
    ``session`` is a session (row) or its id."""
    return store.family_usage(session if isinstance(session, str) else _field(session, "id"))


def report(store: Store, config: Any, active_only: bool = False) -> dict[str, Any]:
    """Use against budgets, overall and per session (read only: no alerts, no stops)."""
    from ecc.store.models import ACTIVE

    sessions = store.list_sessions(states=ACTIVE if active_only else None)
    rows = [for_session(s, config, family(store, s)) for s in sessions]
    return {"overall": overall(store, config), "sessions": rows, "action": config.budget_action}


# -- what is over ---------------------------------------------------------------------------

_METERS = {"tokens": "tokens", "cost_usd": "cost"}  # field of a scope -> meter name


@dataclass
class Overrun:
    """One used-up budget: its scope (``overall`` or ``session``), meter and figures."""

    scope: str
    meter: str  # "tokens" or "cost"
    used: float
    limit: float
    key: str  # the setting that sets the limit

    def figures(self) -> str:
        if self.meter == "cost":
            return f"{_money(self.used)} of {_money(self.limit)}"
        return f"{int(self.used):,} of {int(self.limit):,} tokens"

    def budget(self) -> str:
        return f"{self.scope} {'token' if self.meter == 'tokens' else 'cost'} budget"

    def describe(self) -> str:
        return f"{self.budget()} exceeded ({self.figures()})"

    def as_dict(self) -> dict[str, Any]:
        used: float = int(self.used) if self.meter == "tokens" else self.used
        limit: float = int(self.limit) if self.meter == "tokens" else self.limit
        return {"scope": self.scope, "meter": self.meter, "used": used, "limit": limit}


class OverBudget(EccError):
    """A start refused because a budget is used up and ``budget_action = "stop"``."""

    def __init__(self, overrun: Overrun, what: str = "start a session") -> None:
        self.scope, self.meter = overrun.scope, overrun.meter
        self.used, self.limit = overrun.used, overrun.limit
        super().__init__(
            f"cannot {what}: the {overrun.budget()} is used up "
            f'({overrun.figures()}) and budget_action = "stop"; raise {overrun.key} or set '
            'budget_action = "notify"'
        )


def overruns(scope: dict[str, Any], name: str, keys: dict[str, str]) -> list[Overrun]:
    """The used-up meters of one scope (an :func:`overall` or :func:`for_session` result)."""
    found = []
    for field_name, meter_name in _METERS.items():
        meter_state = scope[field_name]
        if meter_state["limit"] and meter_state["used"] >= meter_state["limit"]:
            found.append(
                Overrun(
                    name, meter_name, meter_state["used"], meter_state["limit"], keys[field_name]
                )
            )
    return found


_OVERALL_KEYS = {"tokens": "token_budget", "cost_usd": "cost_budget_usd"}


def _session_keys(session: Any) -> dict[str, str]:
    profile = _field(session, "profile") or {}
    profile = profile if isinstance(profile, dict) else {}
    return {
        "tokens": "the profile's token_budget"
        if profile.get("token_budget")
        else "session_token_budget",
        "cost_usd": "the profile's max_budget_usd"
        if profile.get("max_budget_usd")
        else "session_cost_budget_usd",
    }


def refuse_start(
    store: Store, config: Any, session: Any = None, what: str = "start a session"
) -> None:
    """Raise :class:`OverBudget` when ``budget_action = "stop"`` and a budget the session would
    count against is used up: the overall one, and ``session``'s own when it resumes."""
    if config.budget_action != "stop":
        return
    found = overruns(overall(store, config), "overall", _OVERALL_KEYS)
    if session is not None:
        mine = for_session(session, config, family(store, session))
        found += overruns(mine, "session", _session_keys(session))
    if found:
        raise OverBudget(found[0], what)


# -- feeding usage --------------------------------------------------------------------------


def record_usage(store: Store, session_id: str, data: dict[str, Any]) -> bool:
    """Add one parsed usage event to a session; running totals add only their growth."""
    tokens_in = int(data.get("input_tokens") or 0)
    tokens_out = int(data.get("output_tokens") or 0)
    cost = float(data.get("cost_usd") or 0.0)
    if data.get("cumulative"):
        session = store.get_session(session_id)
        if session is None:
            return False
        tokens_in = max(0, tokens_in - int(session.input_tokens or 0))
        tokens_out = max(0, tokens_out - int(session.output_tokens or 0))
        cost = max(0.0, cost - float(session.cost_usd or 0.0)) if cost else 0.0
    if not (tokens_in or tokens_out or cost):
        return False
    return store.add_usage(session_id, tokens_in, tokens_out, cost)


# -- enforcement ----------------------------------------------------------------------------


def _state_file(store: Store) -> str:
    """Where the last alerted levels live: beside a SQLite store, else in the state dir."""
    path = getattr(store, "path", None)
    if path is not None:
        return str(path) + ".budgets.json"
    import hashlib

    from ecc.runtime import paths

    key = hashlib.sha256(str(getattr(store, "url", "")).encode()).hexdigest()[:16]
    directory = paths.ensure_private_dir(paths.state_dir())
    return str(directory / f"budgets-{key}.json")


def _raise_level(store: Store, key: str, level: int) -> int | None:
    """Remember ``level`` for ``key``; return the previous level if ``level`` is higher."""
    import fcntl

    path = _state_file(store)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        try:
            state = json.loads(raw) if raw.strip() else {}
        except ValueError:
            state = {}
        previous = int(state.get(key, 1))
        if level == previous:
            return None
        state[key] = level  # decreases are remembered silently, so a later rise alerts again
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(state, sort_keys=True).encode())
        return previous if level > previous else None
    finally:
        os.close(fd)


def _money(value: float) -> str:
    from ecc.runtime.money import format_cost

    return format_cost(value)


def _describe(scope: dict[str, Any]) -> str:
    tokens, cost = scope["tokens"], scope["cost_usd"]
    token_limit = f"{int(tokens['limit']):,}" if tokens["limit"] else "no budget"
    cost_limit = _money(cost["limit"]) if cost["limit"] else "no budget"
    return (
        f"tokens {int(tokens['used']):,} / {token_limit} | "
        f"cost {_money(cost['used'])} / {cost_limit}"
    )


def check(store: Store, config: Any = None, session_id: str | None = None) -> list[dict[str, Any]]:
    """Alert on rising budget states and apply the limit action; return what was done.

    With ``session_id`` (the runner) only that session's own budget is checked besides the
    overall one; without it (the daemon) every active session's is.
    """
    if config is None:
        from ecc.runtime.config import view as fastconfig

        config = fastconfig.view()
    from ecc.store.models import ACTIVE

    done: list[dict[str, Any]] = []
    scope = overall(store, config)
    if scope["level"] >= 2:
        before = _raise_level(store, "overall", scope["level"])
        if before is not None:
            _alert(scope, None, config, done)
    else:
        _raise_level(store, "overall", max(scope["level"], 1))
    if session_id is not None:  # the session, and the ancestors whose budgets cover it
        one = store.get_session(session_id)
        sessions = _lineage(store, one) if one is not None else []
    else:
        sessions = store.list_sessions(states=ACTIVE)
    over_sessions: list[tuple[Any, Overrun]] = []
    for session in sessions:
        mine = for_session(session, config, family(store, session))
        key = f"session:{session.id}"
        if mine["level"] >= 2:
            before = _raise_level(store, key, mine["level"])
            if before is not None:
                _alert(mine, session.id, config, done)
        else:
            _raise_level(store, key, max(mine["level"], 1))
        found = overruns(mine, "session", _session_keys(session))
        if found:
            over_sessions.append((session, found[0]))
    if config.budget_action == "stop":
        everyone = overruns(scope, "overall", _OVERALL_KEYS)
        targets = list(over_sessions)
        if everyone:
            targets = [(s, everyone[0]) for s in store.list_sessions(states=ACTIVE)]
        for over, why in targets:
            for session in _with_descendants(store, over):  # a budget covers the children
                if session.state in ACTIVE and not session.stop_requested:
                    _stop(store, session.id, why, config)
                    done.append({"id": session.id, "action": "stop requested (budget exceeded)"})
    return done


def _lineage(store: Store, session: Any) -> list[Any]:
    """The session, then its parent, its parent's parent, ... (a loop ends the walk)."""
    found = [session]
    seen = {session.id}
    while found[-1].parent_id and found[-1].parent_id not in seen and len(found) < 64:
        parent = store.get_session(found[-1].parent_id)
        if parent is None:
            break
        found.append(parent)
        seen.add(parent.id)
    return found


def _with_descendants(store: Store, session: Any) -> list[Any]:
    """The session and every session below it, parents before children."""
    found, seen, index = [session], {session.id}, 0
    while index < len(found) and len(found) < 10000:
        for child in store.children(found[index].id):
            if child.id not in seen:
                seen.add(child.id)
                found.append(child)
        index += 1
    return found


def _stop(store: Store, session_id: str, why: Overrun, config: Any) -> None:
    """Ask the session's runner to stop (the store's flag, as ``ecc stop`` sets it) and record
    which budget and figures made it."""
    store.request_stop(session_id, float(config.stop_grace_secs))
    store.add_event(session_id, "budget_stop", f"{why.describe()}: stop requested", why.as_dict())


# The events of a stop ecc asked for itself: a budget's, and a conflict's pause (the daemon's
# conflicts step, ecc.sessions.conflicts); each reason ends ": stop requested".
STOP_KINDS = ("budget_stop", "conflict_stop")


def stop_reason(store: Store, session_id: str) -> str | None:
    """Why a budget (or a conflict's pause) asked the session's current run to stop (``session
    token budget exceeded (320 of 200 tokens)``), or None when none did: what the runner
    records as the reason it stopped."""
    reason = None
    for event in store.list_events(session_id):
        if event["to_state"] == "pending":  # created or resumed: a new run
            reason = None
        elif event["kind"] in STOP_KINDS:
            reason = str(event["reason"]).removesuffix(": stop requested")
    return reason


def _alert(scope: dict[str, Any], session_id: str | None, config: Any, done: list) -> None:
    from ecc.contract.types import Notification
    from ecc.observability.notify import send

    state = scope.get("budget_state") or scope["state"]
    over = state == "over_budget"
    suffix = "Budget exceeded" if over else f"Budget alert {state.removeprefix('alert')}%"
    where = f"session {session_id}" if session_id else "all sessions"
    send(
        Notification(
            event="budget_alert",
            title=f"ecc: {suffix.lower()} ({where})",
            body=f"{suffix} | {_describe(scope)}",
            session_id=session_id,
            data={
                "scope": "session" if session_id else "overall",
                "state": state,
                "tokens": scope["tokens"],
                "cost_usd": scope["cost_usd"],
                "action": config.budget_action if over else "notify",
            },
        ),
        config,
    )
    done.append({"id": session_id, "action": f"alert: {state}"})
