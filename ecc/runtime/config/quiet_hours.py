"""Quiet hours, ``"22:00-07:30"`` local time: the config validates them, notify applies them."""

from __future__ import annotations

import time


def parse_quiet_hours(text: str) -> tuple[int, int]:
    """``"22-8"`` or ``"22:00-07:30"`` → (start, end) in minutes after midnight."""

    def minutes(part: str) -> int:
        hour, _, minute = part.strip().partition(":")
        if not hour.isdigit() or (minute and not minute.isdigit()):
            raise ValueError(f"quiet hours {text!r} must look like HH:MM-HH:MM")
        h, m = int(hour), int(minute or 0)
        if h > 23 or m > 59:
            raise ValueError(f"quiet hours {text!r}: {part.strip()} is not a time of day")
        return h * 60 + m

    start, sep, end = text.partition("-")
    if not sep:
        raise ValueError(f"quiet hours {text!r} must look like HH:MM-HH:MM")
    return minutes(start), minutes(end)


def in_quiet_hours(text: str | None, now: time.struct_time | None = None) -> bool:
    """Whether local time ``now`` falls inside ``text`` (start inclusive, end exclusive)."""
    if not text:
        return False
    start, end = parse_quiet_hours(text)
    now = now or time.localtime()
    current = now.tm_hour * 60 + now.tm_min
    if start == end:
        return False
    if start < end:
        return start <= current < end
    return current >= start or current < end
