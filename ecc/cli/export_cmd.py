"""``ecc export``: offer finished sessions to the exporter plugins now (``ecc.exporters``).

The runner offers each session as it ends and the daemon retries what was not delivered
(:mod:`ecc.observability.exports`); this is the same step on demand, and with ``--since`` the
way to send past sessions again. Exporter plugins build their own commands on it (``ecc otel
export`` is this command with ``--exporter otel``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.contract.errors import EccError

_DURATION = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: datetime | None = None) -> str:
    """``--since``: a duration back from now (``90m``, ``2h``, ``7d``, ``1w``) or an ISO date or
    time (UTC unless it says otherwise), as the store's ISO text."""
    from ecc.store.models import iso

    value = text.strip()
    duration = _DURATION.fullmatch(value.lower())
    if duration:
        amount = int(duration.group(1))
        return iso((now or datetime.now(UTC)) - timedelta(**{_UNITS[duration.group(2)]: amount}))
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise EccError(
            f"--since {text!r} is neither a duration (90m, 2h, 7d, 1w) nor an ISO date or time"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return iso(moment)


@click.command("export")
@click.option("--exporter", metavar="NAME", help="Only this exporter plugin (default: every one).")
@click.option(
    "--since",
    metavar="WHEN",
    help="Send every session that ended since WHEN (90m, 2h, 7d, or an ISO date or time), "
    "delivered before or not.",
)
@json_option
def export_command(exporter: str | None, since: str | None, as_json: bool) -> None:
    """Send finished sessions to the exporter plugins (what they have not received yet)."""
    from ecc.observability.exports import export
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    since_iso = parse_since(since) if since is not None else None
    config = view()
    with open_store(config=config) as store:
        reports = export(store, config, exporter=exporter, since=since_iso, again=bool(since))
    if as_json:
        emit_json({"since": since_iso, "exporters": reports})
    else:
        if not reports:
            say("No exporter plugin is installed.")
        for report in reports:
            line = f"{report['exporter']}: {report['delivered']} of {report['offered']} delivered"
            say(line + (f" ({report['error']})" if report["error"] else ""))
    if any(r["error"] or r["delivered"] < r["offered"] for r in reports):
        raise EccError("not every session was delivered; the daemon offers them again")
