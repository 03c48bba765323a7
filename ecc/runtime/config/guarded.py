"""The project keys that need trust: the one table of them, and how a project layer is split.

A repository's own ``.ecc/config.toml`` may tighten policy freely, and every key not listed in
:data:`GUARDS` applies as it always did. A key listed here runs a program, loosens enforcement
or a limit, widens what an agent may do, or sends state, memory or notifications somewhere else;
from an untrusted project file (see :mod:`ecc.runtime.config.trust`) it applies only when its
value is no looser than what the layers below the project give (``tightens``), or changes
nothing. Otherwise it is dropped before the merge and reported with its reason
(``ecc config show --origin``). The user's file, ``ECC_CONFIG``, ``ECC__*`` variables and
``ecc -c`` are the user's own and never filtered.

Patterns are key paths; ``*`` matches one table name (a runner, a profile, a notifier). A
pattern matches every key at or below it. Values compared are the validated ones (a TOML string
``"0.5"`` for a float compares as 0.5), taken from the merged configuration at keys the project
set and from the configuration of the lower layers alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Path = tuple[str, ...]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # the lower layers do not have the key (a new profile, a new runner)

# (new value, value below the project or MISSING, the lower layers' whole configuration)
Check = Callable[[Any, Any, Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Guard:
    pattern: Path
    reason: str
    tightens: Check | None = None  # None: only an unchanged value applies untrusted

    def matches(self, path: Path) -> bool:
        return len(path) >= len(self.pattern) and all(
            want in ("*", got) for want, got in zip(self.pattern, path, strict=False)
        )


# -- comparisons: is the project's value at least as strict as the one below it ---------------


def _is_true(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return new is True


def _not_higher(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return old is not MISSING and new <= old


def _not_lower(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return old is not MISSING and new >= old


def _limit(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    """A budget where 0 means none: a limit where there was none, or a lower one."""
    return new > 0 and (old is MISSING or old == 0 or new <= old)


def _subset(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return set(new) <= set([] if old is MISSING or old is None else old)


def _superset(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return set(new) >= set([] if old is MISSING or old is None else old)


def _narrows(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    """An allow-list where empty means every one: any list narrows an empty one."""
    return old is not MISSING and bool(new) and (not old or set(new) <= set(old))


def _is_false(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return new is False


def _is_none(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return new is None


def _is_empty(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return not new


def _is_stop(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return new == "stop"


def _is_deny(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    return new == "deny"


def _shorter_hold(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    """A held call decided sooner: stricter only while no decision means deny below."""
    on_timeout = value_at(lower, ("risk", "approval_timeout_decision"))
    return _not_higher(new, old, lower) and on_timeout in ("deny", MISSING)


# Claude's permission modes (and the codex/gemini names ecc maps): read-only, then "asks".
_MODE_RANK = {"plan": 0, "read-only": 0, "default": 1, None: 1}


def _permission_mode(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    old = None if old is MISSING else old
    return new in _MODE_RANK and _MODE_RANK[new] <= _MODE_RANK.get(old, 2)


def _new_profile(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    """``inherits`` of a profile the lower layers do not define: it can only inherit what the
    user's own profiles hold. Re-pointing one of the user's profiles is not tightening."""
    return old is MISSING


def _profile_budget(session_key: str) -> Check:
    """A profile's limit overrides the session limit ``session_key``: lower than both."""

    def check(new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
        if new is None:
            return True
        if old is not MISSING and old is not None:
            return bool(new <= old)
        session = lower.get(session_key, 0)
        return not session or new <= session

    return check


RUNS = "runs a program the repository names"
REDIRECTS = "sends {} somewhere the repository chooses"

GUARDS: tuple[Guard, ...] = (
    Guard(("harness_runners", "*"), RUNS + " (program, arguments, environment)"),
    Guard(("executor",), REDIRECTS.format("sessions")),
    Guard(("executors", "*"), "executor settings name brokers, hosts and credentials"),
    Guard(("worktree_root",), "moves worktrees, and the agents' writes, to a path it names"),
    Guard(("worktree", "setup"), RUNS + " in every new worktree", _is_empty),
    Guard(("orchestration_templates", "*"), RUNS + " (steps' tasks, the check command)"),
    Guard(("sync", "hooks"), RUNS + " from every harness's hooks (ecc sync)", _is_empty),
    Guard(
        ("worktree", "copy_ignored"),
        "copies files git ignores (secrets such as .env) into the agents' worktrees",
        _subset,
    ),
    Guard(("store", "url"), REDIRECTS.format("the session store")),
    Guard(("memory", "backend"), REDIRECTS.format("memory (another backend)")),
    Guard(("memory", "settings"), REDIRECTS.format("memory (backend settings)")),
    Guard(("notifications", "notifiers"), "drops notifiers", _superset),
    Guard(("notifications", "events"), "silences events", _superset),
    Guard(("notifications", "quiet_hours"), "silences notifications", _is_none),
    Guard(("notifications", "settings"), REDIRECTS.format("notifications (URLs, files)")),
    Guard(("web", "base_url"), REDIRECTS.format("the links in notifications")),
    Guard(("risk", "enforce"), "turns enforcement off", _is_true),
    Guard(("risk", "fail_closed"), "lets calls through when the hook fails", _is_true),
    Guard(("risk", "max_input_bytes"), "lets more tool calls through unscored", _not_lower),
    Guard(("risk", "approval_timeout"), "changes how long a held call waits", _shorter_hold),
    Guard(("risk", "approval_timeout_decision"), "lets held calls run unanswered", _is_deny),
    Guard(("risk", "review"), "raises a risk threshold", _not_higher),
    Guard(("risk", "require_confirmation"), "raises a risk threshold", _not_higher),
    Guard(("risk", "block"), "raises a risk threshold", _not_higher),
    Guard(("risk", "disabled_scorers"), "disables risk scorers", _subset),
    Guard(("session_timeout_secs",), "lets sessions run longer", _not_higher),
    Guard(("stop_grace_secs",), "lets a stopped harness run on longer", _not_higher),
    Guard(("store_retry_secs",), "holds a failing store's backlog longer", _not_higher),
    Guard(("output_backlog_bytes",), "buffers more of a harness's output", _not_higher),
    Guard(("cost_budget_usd",), "raises or removes a budget", _limit),
    Guard(("token_budget",), "raises or removes a budget", _limit),
    Guard(("session_token_budget",), "raises or removes a budget", _limit),
    Guard(("session_cost_budget_usd",), "raises or removes a budget", _limit),
    Guard(("budget_action",), "stops enforcing budgets", _is_stop),
    Guard(("budget_alert_thresholds",), "delays budget alerts", _not_higher),
    Guard(("conflict_resolution", "enabled"), "lets sessions change the same file", _is_true),
    Guard(("conflict_resolution", "notify_lead"), "silences conflict notifications", _is_true),
    Guard(("agent_profiles", "*", "permission_mode"), "loosens permissions", _permission_mode),
    Guard(("agent_profiles", "*", "allowed_tools"), "pre-approves tools", _subset),
    Guard(("agent_profiles", "*", "disallowed_tools"), "allows tools back", _superset),
    Guard(("agent_profiles", "*", "add_dirs"), "opens directories to the agent", _subset),
    Guard(("agent_profiles", "*", "append_system_prompt"), "adds system-prompt instructions"),
    Guard(
        ("agent_profiles", "*", "max_budget_usd"),
        "raises a budget",
        _profile_budget("session_cost_budget_usd"),
    ),
    Guard(
        ("agent_profiles", "*", "token_budget"),
        "raises a budget",
        _profile_budget("session_token_budget"),
    ),
    Guard(("agent_profiles", "*", "inherits"), "re-points a profile's permissions", _new_profile),
    Guard(("delegation", "enabled"), "lets agents start sessions", _is_false),
    Guard(("delegation", "max_depth"), "raises a delegation limit", _not_higher),
    Guard(("delegation", "max_children"), "raises a delegation limit", _not_higher),
    Guard(("delegation", "max_wait_secs"), "raises a delegation limit", _not_higher),
    Guard(("remote", "allowed_roots"), "widens what remote callers may target", _subset),
    Guard(("remote", "allowed_harnesses"), "widens what remote callers may run", _narrows),
    Guard(("remote", "allowed_profiles"), "widens what remote callers may run", _narrows),
    Guard(("remote", "max_body_bytes"), "raises a remote limit", _not_higher),
    Guard(("remote", "rate_limit_per_minute"), "raises a remote limit", _not_higher),
    Guard(("remote", "read_timeout_secs"), "raises a remote limit", _not_higher),
    Guard(("remote", "max_response_bytes"), "raises a remote limit", _not_higher),
    Guard(("remote", "max_idle_connections_per_peer"), "raises a remote limit", _not_higher),
)


# Keys under a guarded table that a project may set untrusted: they choose among the user's own
# definitions only (a queue on the user's broker routes to the user's workers).
OPEN: tuple[Guard, ...] = (Guard(("executors", "*", "queue"), "picks one of the user's queues"),)


def guard_for(path: Path) -> Guard | None:
    """The guard covering the key at ``path``, or None for a key that needs no trust."""
    if any(open_key.matches(path) for open_key in OPEN):
        return None
    return next((guard for guard in GUARDS if guard.matches(path)), None)


def leaves(data: Mapping[str, Any], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every key of ``data`` that holds a value (an empty table is a value here)."""
    for key, value in data.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            yield from leaves(value, path)
        else:
            yield path, value


def guarded_leaves(data: Mapping[str, Any]) -> list[tuple[Path, Any, Guard]]:
    """The keys of a layer's ``data`` that need trust, with their guards."""
    found = []
    for path, value in leaves(data):
        guard = guard_for(path)
        if guard is not None:
            found.append((path, value, guard))
    return found


def value_at(data: Mapping[str, Any], path: Path) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return MISSING
        node = node[part]
    return node


def _applies(guard: Guard, new: Any, old: Any, lower: Mapping[str, Any]) -> bool:
    if new == old:
        return True  # changes nothing
    if guard.tightens is None or new is MISSING:
        return False
    try:
        return bool(guard.tightens(new, old, lower))
    except TypeError:  # values of a shape the comparison does not know: not tightening
        return False


def split(
    data: Mapping[str, Any],
    *,
    effective: Mapping[str, Any],
    lower: Mapping[str, Any] | None,
    from_layer: Callable[[Path], bool],
) -> tuple[dict[str, Any], list[tuple[Path, str]]]:
    """Split an untrusted layer's ``data`` into what applies and what is dropped (with why).

    ``effective`` is the validated merge of every layer, ``lower`` that of the layers below
    this one (None when they do not validate alone: then nothing guarded applies), and
    ``from_layer(path)`` whether the effective value at ``path`` is this layer's (a value a
    higher layer replaces is left alone: it has no effect).
    """
    kept = _copy(data)
    dropped: list[tuple[Path, str]] = []
    for path, _value, guard in guarded_leaves(data):
        if not from_layer(path):
            continue
        new = value_at(effective, path)
        old = MISSING if lower is None else value_at(lower, path)
        if lower is not None and _applies(guard, new, old, lower):
            continue
        _remove(kept, path)
        dropped.append((path, guard.reason))
    return kept, dropped


def _copy(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _remove(data: dict[str, Any], path: Path) -> None:
    """Delete the key at ``path``, and the tables it leaves empty (an empty table would create
    the runner or profile it names)."""
    node = data
    trail = []
    for part in path[:-1]:
        trail.append((node, part))
        node = node[part]
    del node[path[-1]]
    for parent, part in reversed(trail):
        if parent[part]:
            break
        del parent[part]
