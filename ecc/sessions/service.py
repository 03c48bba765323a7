"""Starting a session, the one way every front does it: the CLI, the remote API, the dashboard.

:func:`start` validates the request and records the session (``manager.create``), then hands it
to its executor (``manager.submit``). The caller passes its configuration: a front that let the
executor find its own would load the full pydantic config a second time.
"""

from __future__ import annotations

from ecc.contract.errors import EccError

TYPE_CHECKING = False  # typing stays unimported: ``ecc run -d`` is a hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ecc.sessions.manager import Request
    from ecc.store.models import Session


class NotStarted(EccError):
    """The session was recorded but its executor could not start it (it is now ``failed``)."""

    def __init__(self, message: str, session: Session) -> None:
        super().__init__(message)
        self.session = session


def start(
    store: Any,
    request: Request,
    config: Any,
    warn: Callable[[str], None] | None = None,
    created: Callable[[Session], None] | None = None,
) -> Session:
    """Create the session for ``request`` and submit it; returns the session as created.

    A request ecc refuses raises :class:`EccError` with nothing written (with
    ``budget_action = "stop"`` and a used-up budget: :class:`ecc.observability.budgets.
    OverBudget`); a session its executor could not start raises :class:`NotStarted` (the
    session is recorded as failed). ``warn`` receives, before the session is submitted, the
    line saying that ``risk.enforce`` is on and the harness cannot be enforced; ``created``
    the session once it is recorded, before its runner can start (a group records its member).
    """
    from ecc.sessions import manager

    if config.budget_action == "stop":  # notify (the default) imports nothing more
        from ecc.observability import budgets

        budgets.refuse_start(store, config)
    session = manager.create(store, request, config)
    if created is not None:
        created(session)
    if warn is not None and config.risk.enforce:
        from ecc.sessions import enforcement, harnesses

        line = enforcement.warning(config, harnesses.resolve(session.harness, config))
        if line:
            warn(line)
    try:
        manager.submit(store, session, config)
    except EccError as exc:
        raise NotStarted(exc.message, session) from None
    return session
