"""``doctor``: invalid files, duplicate IDs, broken links and skipped symlinks. Never modifies."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from operator import itemgetter

from ecc.vault.format import as_slug, id_sort_key
from ecc.vault.loading import MAX_DIAGNOSTICS, validate_scopes, visibility_clause

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.loading import VaultLoad
    from ecc.vault.service import VaultService

_ID = itemgetter(2)
# The last report and what it was made from (``_report_key``): one for the whole vault, one for
# the last harness asked about.
REPORT_META = ("doctor_report", "doctor_report_harness")


def diagnose(service: VaultService, *, scopes: Any, target_harness: Any) -> dict[str, Any]:
    """``VaultService.doctor``: the vault's problems, in load order, each list bounded.

    The report depends only on the rows of each scope's settled index state and on the load's
    diagnostics, so it is kept in the first scope's index under their ids: a vault that did
    not change is not gone through again (at 50,000 memories that costs ~120 ms of queries).
    """
    load = service.load(validate_scopes(scopes))
    try:
        harness = as_slug(target_harness, "target harness") if target_harness else None
        key = _report_key(load, harness)
        slot = REPORT_META[harness is not None]
        if key is not None:
            cached = _kept_report(load, slot, key)
            if cached is not None:
                return cached
        report = _report(load, harness)
        if key is not None:
            _keep_report(load, slot, key, report)
        return report
    finally:
        load.close()


def _report_key(load: VaultLoad, harness: str | None) -> str | None:
    """What the report is a function of, or None when a scope's rows are not a settled state."""
    if not load.scopes or not all(s.settled and s.index.persistent for s in load.scopes):
        return None
    code = os.stat(__file__)  # another doctor (an upgrade) reports afresh
    return json.dumps(
        [
            f"{code.st_size}:{code.st_mtime_ns}",
            harness,
            [(s.scope, s.index.key, s.settled) for s in load.scopes],
            load.diagnostics(),
            load.temp_files,
            load.temp_file_count,
        ]
    )


def _kept_report(load: VaultLoad, slot: str, key: str) -> dict[str, Any] | None:
    try:
        kept = json.loads(load.scopes[0].index.get_meta(slot).get(slot) or "null")
    except (sqlite3.Error, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    report = kept.get("report")
    return report if isinstance(report, dict) else None


def _keep_report(load: VaultLoad, slot: str, key: str, report: dict[str, Any]) -> None:
    try:
        load.scopes[0].index.apply([], [], {slot: json.dumps({"key": key, "report": report})})
    except sqlite3.Error:
        pass  # only speed is lost


def _report(load: VaultLoad, harness: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    visible = visibility_clause(harness, params)
    # (scope, rel, id, links_d) of each valid, visible document, in load order; the
    # per-document work stays in C (dict lookups, Counter): doctor runs over whole vaults.
    entries: list[tuple[str, str, str, str]] = []
    for scope_load in load.scopes:
        scope = scope_load.scope
        rows = {
            row[1]: row
            for row in scope_load.index.query(
                f"SELECT :_scope, rel, id, links_d FROM docs WHERE code IS NULL{visible}",
                {**params, "_scope": scope},
            )
        }
        entries.extend(filter(None, map(rows.get, scope_load.included)))
    counts = Counter(map(_ID, entries))
    paths_by_id: dict[str, list[str]] = {}
    if len(counts) < len(entries):
        for entry_scope, rel, memory_id, _links in entries:
            if counts[memory_id] > 1:
                paths_by_id.setdefault(memory_id, []).append(f"{entry_scope}:{rel}")
    duplicates = sorted(
        ({"id": memory_id, "paths": paths} for memory_id, paths in paths_by_id.items()),
        key=lambda item: id_sort_key(str(item["id"])),
    )
    broken = [
        {"sourceId": memory_id, "targetId": target, "path": f"{entry_scope}:{rel}"}
        for entry_scope, rel, memory_id, links_d in entries
        if links_d != "\n"
        for target in links_d.split("\n")
        if target and target not in counts
    ]
    broken.sort(key=lambda item: id_sort_key(item["sourceId"]))  # stable: load order
    diagnostics = load.diagnostics()
    ok = (
        load.invalid_file_count == 0
        and not duplicates
        and not broken
        and load.skipped_symlink_count == 0
        and not load.truncated
    )
    return {
        "schemaVersion": "ecc.memory.doctor.v1",
        "ok": ok,
        "memoryCount": len(entries),
        "invalidFiles": load.invalid_files,
        "invalidFileCount": load.invalid_file_count,
        "duplicateIds": duplicates[:MAX_DIAGNOSTICS],
        "duplicateIdCount": len(duplicates),
        "brokenLinks": broken[:MAX_DIAGNOSTICS],
        "brokenLinkCount": len(broken),
        "skippedSymlinks": load.skipped_symlinks,
        "skippedSymlinkCount": load.skipped_symlink_count,
        "scannedBytes": load.scanned_bytes,
        "truncated": load.truncated,
        "diagnosticsTruncated": diagnostics["diagnosticsTruncated"]
        or len(duplicates) > MAX_DIAGNOSTICS
        or len(broken) > MAX_DIAGNOSTICS
        or load.temp_file_count > len(load.temp_files),
        # not in the reference (which cannot see them): writers' temp files left behind
        "tempFiles": load.temp_files,
        "tempFileCount": load.temp_file_count,
    }
