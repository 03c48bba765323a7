"""``read``: one memory by ID, whatever its status, with the active memories that link to it."""

from __future__ import annotations

import json

from ecc.contract.errors import EccError
from ecc.vault.format import as_memory_id, as_slug
from ecc.vault.loading import MAX_DIAGNOSTICS, validate_scopes, visibility_clause

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.service import VaultService


def read_memory(
    service: VaultService, memory_id: Any, *, scopes: Any, target_harness: Any
) -> dict[str, Any]:
    """``VaultService.read``: a missing or duplicated ID is an error."""
    wanted = as_memory_id(memory_id)
    harness = as_slug(target_harness, "target harness") if target_harness else None
    load = service.load(validate_scopes(scopes))
    try:
        params: dict[str, Any] = {"id": wanted, "d": f"\n{wanted}\n"}
        visible = visibility_clause(harness, params)
        matches = []
        backlinks: list[tuple[str, str]] = []
        for scope_load in load.scopes:
            for rel, summary_json, body in scope_load.index.query(
                "SELECT rel, summary, body FROM docs JOIN texts USING(docid)"
                f" WHERE code IS NULL AND id = :id{visible}",
                params,
            ):
                matches.append((scope_load.scope, rel, summary_json, body))
            backlinks.extend(
                scope_load.index.query(
                    "SELECT id_key, summary FROM docs JOIN texts USING(docid)"
                    " WHERE code IS NULL AND status = 'active'"
                    f" AND instr(links_d, :d) > 0{visible}",
                    params,
                )
            )
        if not matches:
            raise EccError(f"Memory {wanted} was not found.")
        if len(matches) > 1:
            raise EccError(f"Memory {wanted} is duplicated in {len(matches)} files.")
        scope, rel, summary_json, body = matches[0]
        backlinks.sort(key=lambda item: item[0])
        return {
            "schemaVersion": "ecc.memory.read.v1",
            "memory": {**json.loads(summary_json), "body": body},
            "path": f"{scope}:{rel}",
            "backlinks": [json.loads(item[1]) for item in backlinks[:MAX_DIAGNOSTICS]],
            "backlinksTruncated": len(backlinks) > MAX_DIAGNOSTICS,
        }
    finally:
        load.close()
