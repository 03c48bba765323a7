"""How every front shows a cost in US dollars: to the cent, or better below a cent.

Agents' calls often cost fractions of a cent, and ``$0.00`` for them reads as "free". Amounts of
a cent or more show cents (with thousands separators); smaller ones show four decimals, and
anything under a hundredth of a cent shows as ``<$0.0001``.
"""

from __future__ import annotations

SMALLEST = 0.0001


def format_cost(usd: float | int | None) -> str:
    """``usd`` as text: ``$0.00`` (nothing), ``<$0.0001``, ``$0.0042``, ``$0.42``, ``$1,234.57``."""
    value = float(usd or 0)
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value == 0:
        return "$0.00"
    if value < SMALLEST:
        return f"{sign}<$0.0001"
    if value < 0.01:
        return f"{sign}${value:.4f}"
    return f"{sign}${value:,.2f}"
