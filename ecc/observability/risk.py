"""Risk of one tool call: the sum of every risk scorer's contributions, clamped to 0..1.

Scorers are ``ecc.risk_scorers`` plugins implementing ``ecc_score_tool_call``; the built-in one is
``heuristic``. The score maps to an action with the thresholds of ``[risk]``:

``allow`` < review ≤ ``review`` < require_confirmation ≤ ``require_confirmation`` < block ≤
``block`` (every comparison inclusive, and the names, as in the reference). The action is what
the score says; the hook's *decision* (``allow``/``ask``/``deny``) is what the harness was told
and stays a field of its own. Rows recorded before these names were used say ``none``:
:func:`stored_action` reads them as ``allow``.

This module imports nothing heavy: ``ecc hook`` uses it on every tool call.
"""

from __future__ import annotations

from ecc.contract.plain import factory, plain

TYPE_CHECKING = False  # typing stays unimported: ecc hook scores every tool call
if TYPE_CHECKING:
    from typing import Any

    from ecc.contract.types import RiskContribution, ToolCall

ACTIONS = ("allow", "review", "require_confirmation", "block")


@plain()
class RiskAssessment:
    """The score of one call, the action it maps to, and every contribution with its reason."""

    score: float
    action: str
    contributions: list[RiskContribution] = factory(list)
    errors: list[str] = factory(list)  # scorers that raised (name: error)

    @property
    def reasons(self) -> list[str]:
        return [c.reason for c in self.contributions if c.reason]

    def as_dict(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 4),
            "action": self.action,
            "reasons": self.reasons,
            "contributions": [
                {"amount": c.amount, "reason": c.reason, "scorer": c.scorer}
                for c in self.contributions
            ],
            "errors": self.errors,
        }


def action_for(score: float, risk: Any) -> str:
    """Map a clamped score to an action with ``risk`` (``config.risk`` or a view of it)."""
    if score >= risk.block:
        return "block"
    if score >= risk.require_confirmation:
        return "require_confirmation"
    if score >= risk.review:
        return "review"
    return "allow"


def stored_action(action: str | None, score: float | None) -> str | None:
    """A recorded call's action under the spec's names: ``none`` (and a scored row without one)
    is ``allow``; an unscored row has none."""
    if action == "none" or (action is None and score is not None):
        return "allow"
    return action


def assess(call: ToolCall, config: Any, hook: Any) -> RiskAssessment:
    """Score ``call`` with every scorer registered on ``hook`` (a pluggy ``pm.hook``).

    Contributions are summed in the order scorers return them (binary doubles, so the
    reference's boundary cases such as 0.20 + 0.40 land exactly where it puts them). A scorer
    that raises is skipped and named in ``errors``; the others still count.
    """
    from ecc.runtime.plugins.calls import call_each

    contributions: list[RiskContribution] = []
    errors: list[str] = []
    for outcome in call_each(hook.ecc_score_tool_call, call=call, config=config):
        if outcome.error is not None:  # one broken scorer must not hide the others
            errors.append(outcome.describe_error())
            continue
        for contribution in outcome.result or ():
            if contribution.scorer:
                contributions.append(contribution)
            else:
                from ecc.contract.types import RiskContribution

                contributions.append(
                    RiskContribution(contribution.amount, contribution.reason, outcome.name)
                )
    total = 0.0
    for contribution in contributions:
        total += contribution.amount
    score = min(1.0, max(0.0, total))
    return RiskAssessment(score, action_for(score, config.risk), contributions, errors)


def score_call(call: ToolCall, config: Any = None) -> RiskAssessment:
    """Score ``call`` with the process's plugins and configuration (the CLI path)."""
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import get_plugins

    config = config or view()
    return assess(call, config, get_plugins(config).hook)
