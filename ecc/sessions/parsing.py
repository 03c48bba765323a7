"""What the harness adapter makes of stored output lines: usage, tool calls, its session id.

:class:`OutputParser` feeds every stored line to the adapter's ``ecc_parse_output_line`` and
records the events it returns; the runner's writer uses it after each batch it stores, and so
does a drain of a dead runner's spool (:func:`ecc.sessions.spool.drain_spool`).
"""

from __future__ import annotations

import logging

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.runner")


class OutputParser:
    """The session's output parser: resolved on the first stored line, then called per line
    (a parser failure is logged, never fatal)."""

    def __init__(self, hook: Any, session: Session) -> None:
        self.hook = hook
        self.session = session
        self.parser: Callable[..., Any] | None = None
        self.resolved = False

    @classmethod
    def for_session(cls, config: Any, session: Session) -> OutputParser | None:
        """The parser of the session's harness, or None when no adapter parses its output."""
        from ecc.runtime.plugins.loader import get_plugins

        hook = get_plugins(config).harness_hook(session.harness).ecc_parse_output_line
        return cls(hook, session) if hook.get_hookimpls() else None

    def feed(self, store: Store, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Parse stored rows ``(seq, stream, ts, line)`` and record what the parser finds."""
        if not rows:
            return
        if not self.resolved:
            _, stream, _, line = rows[0]
            self.parser = owning_parser(self.hook, self.session.harness, line, stream)
            self.resolved = True
        if self.parser is None:
            return
        for _, stream, _, line in rows:
            try:
                events = self.parser(harness=self.session.harness, line=line, stream=stream)
            except Exception as exc:
                log.warning("output parser failed on a line: %s", exc)
                continue
            for event in events or ():
                try:
                    apply_output_event(store, self.session, event)
                except Exception as exc:
                    log.warning("could not record %s event: %s", getattr(event, "kind", "?"), exc)


def owning_parser(hook: Any, harness: str, line: str, stream: str) -> Callable[..., Any] | None:
    """The one ``ecc_parse_output_line`` implementation that parses ``harness``, or None.

    ``hook`` holds only the plugins that declare the harness (``PluginSet.harness_hook``), so
    one implementation is the parser whatever it answers for the first line. When several
    declare it, the first (in pluggy's order) that answers the first line owns the session, and
    later lines skip the hook machinery (a full pluggy call per line would cap capture
    throughput).
    """
    from ecc.runtime.plugins.calls import implementations

    found = implementations(hook)
    if len(found) == 1:
        return found[0]
    for impl in found:
        try:
            if impl(harness=harness, line=line, stream=stream) is not None:
                return impl
        except Exception as exc:
            log.warning("output parser %s failed: %s", impl.name, exc)
    return None


def apply_output_event(store: Store, session: Session, event: Any) -> None:
    """Record one :class:`ecc.contract.types.OutputEvent` parsed by the harness adapter."""
    data = event.data or {}
    if event.kind == "harness_session" and data.get("id"):
        store.update_session(session.id, harness_session_id=str(data["id"]))
    elif event.kind == "usage":
        from ecc.observability import budgets

        if budgets.record_usage(store, session.id, data):
            budgets.check(store, session_id=session.id)
    elif event.kind == "tool_call":
        store.record_tool_call(
            session_id=session.id,
            harness=session.harness,
            tool=str(data.get("tool") or "unknown"),
            input=data.get("input", {}),
            decision="observed",
        )
    elif event.kind == "final":  # the agent's answer: an event, and a turn of the conversation
        text = str(data.get("text", ""))
        store.add_event(session.id, "output_final", text[:2000], data)
        store.add_answer(session.id, session.attempts or 1, text, delta=bool(data.get("delta")))
    else:
        store.add_event(session.id, f"output_{event.kind}", str(data.get("text", ""))[:2000], data)
