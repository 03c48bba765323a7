"""The ``otel`` exporter (entry point ``ecc.exporters:otel``) and the ``ecc otel`` commands.

Importing this module imports no OpenTelemetry package: ecc loads every exporter plugin where
sessions end, and the SDK is imported only when an OTLP endpoint is set and there is something
to send.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ecc.contract.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from ecc.contract.types import SessionRecord


@hookimpl
def ecc_export_sessions(sessions: list[SessionRecord], config: Any) -> list[str] | None:
    from ecc_otel.settings import Settings

    settings = Settings.from_env()
    if settings is None:
        return None  # not configured: the sessions stay due until it is
    from ecc_otel.send import send

    return send(sessions, settings)


@hookimpl
def ecc_register_commands(cli: click.Group) -> None:
    from ecc_otel.command import otel_group

    cli.add_command(otel_group, "otel")


@hookimpl
def ecc_doctor_checks(config: Any) -> list[dict[str, Any]]:
    from ecc_otel.settings import ENDPOINTS, PROTOCOLS, Settings

    settings = Settings.from_env()
    if settings is None:
        return [
            {
                "name": "exporter otel",
                "level": "warn",
                "detail": "no OTLP endpoint set (or OTEL_SDK_DISABLED=true): nothing is sent",
                "fix": f"set {ENDPOINTS[0]} (e.g. http://127.0.0.1:4318) to send sessions",
            }
        ]
    if settings.protocol not in PROTOCOLS:
        return [
            {
                "name": "exporter otel",
                "level": "fail",
                "detail": f"OTEL_EXPORTER_OTLP_PROTOCOL={settings.protocol} is not supported",
                "fix": "set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf or grpc",
            }
        ]
    if settings.protocol == "grpc" and not _importable("opentelemetry.exporter.otlp.proto.grpc"):
        return [
            {
                "name": "exporter otel",
                "level": "fail",
                "detail": "OTEL_EXPORTER_OTLP_PROTOCOL=grpc, but the grpc exporter is missing",
                "fix": "pip install 'ecc-otel[grpc]' (or set http/protobuf)",
            }
        ]
    return [
        {
            "name": "exporter otel",
            "level": "ok",
            "detail": f"OTLP {settings.protocol} to {settings.endpoint}",
            "fix": "",
        }
    ]


def _importable(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False
