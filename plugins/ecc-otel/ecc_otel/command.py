"""``ecc otel``: the exporter's commands, built on ecc's own ``ecc export``.

``ecc otel export`` is ``ecc export --exporter otel``: the plugin reads nothing from the store
itself; ecc offers it the sessions through ``ecc_export_sessions``, as after every session.
"""

from __future__ import annotations

import click

from ecc.contract.errors import EccError


@click.group("otel")
def otel_group() -> None:
    """Send sessions to an OpenTelemetry collector (OTLP)."""


@otel_group.command("export")
@click.option(
    "--since",
    metavar="WHEN",
    help="Send every session that ended since WHEN (90m, 2h, 7d, or an ISO date or time), "
    "sent before or not; without it, those not sent yet.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def export_command(ctx: click.Context, since: str | None, as_json: bool) -> None:
    """Send finished sessions as spans and metrics to the OTLP endpoint (OTEL_EXPORTER_OTLP_*)."""
    from ecc_otel.settings import ENDPOINTS, Settings

    if Settings.from_env() is None:
        raise EccError(f"no OTLP endpoint: set {ENDPOINTS[0]} (or OTEL_SDK_DISABLED is true)")
    root = ctx.find_root()
    group = root.command
    core = group.get_command(root, "export") if isinstance(group, click.Group) else None
    if core is None:
        raise EccError("this ecc has no `ecc export` command; upgrade ecc")
    ctx.invoke(core, exporter="otel", since=since, as_json=as_json)
