"""The shared body of ``ecc hooks`` and ``ecc mcp``: ask the harness's adapter to install or
remove one integration, then report what it changed (or would change, with ``--dry-run``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, say


def apply_integration(
    kind: str,
    action: str,
    harness: str,
    scope: str,
    dry_run: bool,
    as_json: bool,
    *,
    options: dict[str, Any],
    what: str,
    extra_json: Callable[[Any], dict[str, Any]] | None = None,
) -> None:
    """Run ``ecc_install_integration`` for ``kind`` through the adapter that owns ``harness``."""
    from ecc.contract.errors import EccError
    from ecc.contract.types import IntegrationRequest
    from ecc.runtime import paths
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import get_plugins
    from ecc.sessions.harnesses import canonical_name

    config = view()
    name = canonical_name(harness, config)
    request = IntegrationRequest(
        kind=kind,
        action=action,
        scope=scope,
        project_dir=paths.find_project_root() or Path.cwd(),
        dry_run=dry_run,
        options=options,
    )
    adapter = get_plugins(config).harness_hook(name)
    result = adapter.ecc_install_integration(harness=name, request=request)
    if result is None:
        raise EccError(f"no installed adapter can {action} {what} for harness {name!r}")
    if as_json:
        emit_json(
            {
                "harness": name,
                "action": action,
                "scope": scope,
                "dry_run": dry_run,
                **(extra_json(result) if extra_json else {}),
                "changed_files": [str(path) for path in result.changed_files],
                "diff": result.diff,
                "message": result.message,
            }
        )
        return
    if dry_run:
        if result.diff:
            click.echo(result.diff, nl=False)
        say(f"(dry run) {len(result.changed_files)} file(s) would change")
        return
    say(result.message)
