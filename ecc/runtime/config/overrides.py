"""The ``ecc -c KEY=VALUE`` pairs of this process: the last layer of every config load.

Kept apart from the loader (``model``) and the cached view (``view``) so that both read the same
pairs and the view can do so without importing pydantic.
"""

from __future__ import annotations

_pairs: tuple[str, ...] = ()


def set_pairs(pairs: tuple[str, ...]) -> None:
    global _pairs
    _pairs = tuple(pairs)


def pairs() -> tuple[str, ...]:
    return _pairs
