"""Loading the requested scopes: scan each through the backend, bring its derived index up to date
and collect the scan's diagnostics, in walk order.

Search, read and doctor all start from a :class:`VaultLoad`. Only documents whose stamp changed
are read and parsed again; an index that cannot be used (locked, broken, no cache dir) is
replaced by one in memory built from the files, with identical results.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ecc.contract.errors import EccError
from ecc.vault.format import (
    DEFAULT_RECALL_SCOPES,
    MEMORY_SCOPES,
    MemoryFormatError,
    as_enum,
)
from ecc.vault.index import ScopeIndex
from ecc.vault.rowbuild import build_row as _build_row

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import VaultStore

# Far above the reference's 5,000 entries / 16 MiB, still bounded against hostile vaults.
MAX_FILES = 250_000
MAX_SCAN_BYTES = 1 << 30
MAX_DIAGNOSTICS = 100

INVALID_MESSAGES = {
    "suspected-secret": "Memory document was quarantined.",
    "location-mismatch": "Memory metadata does not match its vault location.",
    "invalid-document": "Memory document is invalid or unreadable.",
}

_REL = operator.itemgetter(0)  # of a scanned (rel, stamp) pair
_STAMP = operator.itemgetter(1)


def validate_scopes(scopes: Any) -> list[str]:
    """Requested scopes (default project+team), validated and in the given order."""
    if scopes is None:
        return list(DEFAULT_RECALL_SCOPES)
    if isinstance(scopes, str):
        scopes = [scopes]
    if not isinstance(scopes, list | tuple):
        raise MemoryFormatError("scopes must be an array.")
    scopes = list(scopes)
    if not scopes:
        return list(DEFAULT_RECALL_SCOPES)
    if len(scopes) > len(MEMORY_SCOPES):
        raise MemoryFormatError(f"scopes has too many values (maximum {len(MEMORY_SCOPES)}).")
    result = [as_enum(scope, "memory scope", MEMORY_SCOPES) for scope in scopes]
    if len(set(result)) != len(result):
        raise MemoryFormatError("scopes must not contain duplicate values.")
    return result


def visibility_clause(target_harness: str | None, params: dict[str, Any]) -> str:
    """The SQL condition on ``docs`` that keeps memories meant for ``target_harness`` (or all)."""
    if target_harness is None:
        return ""
    params["_all"] = "\nall\n"
    params["_harness"] = f"\n{target_harness}\n"
    return " AND (instr(targets_d, :_all) > 0 OR instr(targets_d, :_harness) > 0)"


class ScopeLoad:
    """One scope of a load: its index and the documents included, in walk order."""

    __slots__ = ("included", "index", "scope")

    def __init__(self, scope: str, index: ScopeIndex) -> None:
        self.scope = scope
        self.index = index
        self.included: list[str] = []  # rels in walk order


class VaultLoad:
    """The scopes of one request and what their scans reported."""

    def __init__(self) -> None:
        self.scopes: list[ScopeLoad] = []
        self.invalid_files: list[dict[str, str]] = []
        self.invalid_file_count = 0
        self.skipped_symlinks: list[str] = []
        self.skipped_symlink_count = 0
        self.temp_files: list[str] = []  # vault paths of writers' leftovers (at most 100)
        self.temp_file_count = 0
        self.scanned_bytes = 0
        self.truncated = False

    def diagnostics(self) -> dict[str, Any]:
        return {
            "invalidFiles": self.invalid_files,
            "invalidFileCount": self.invalid_file_count,
            "skippedSymlinks": self.skipped_symlinks,
            "skippedSymlinkCount": self.skipped_symlink_count,
            "scannedBytes": self.scanned_bytes,
            "truncated": self.truncated,
            "diagnosticsTruncated": self.invalid_file_count > len(self.invalid_files)
            or self.skipped_symlink_count > len(self.skipped_symlinks),
        }

    def close(self) -> None:
        for scope in self.scopes:
            scope.index.close()


def load_scopes(
    store: VaultStore, backend_name: str, cache_dir: Path | None, requested: list[str]
) -> VaultLoad:
    """Scan ``requested`` (validated scopes) in ``store`` and refresh their indexes.

    The caller keeps the store open for the call and closes the load once done with it.
    """
    load = VaultLoad()
    visited = 0
    try:
        for scope in requested:
            if load.truncated or visited >= MAX_FILES or load.scanned_bytes >= MAX_SCAN_BYTES:
                load.truncated = True
                break
            try:
                scan = store.scan(scope, MAX_FILES - visited)
            except OSError as exc:
                raise EccError(
                    f"Memory scope {scope} could not be read: {exc.strerror or exc}."
                ) from None
            visited += scan.visited
            load.truncated = load.truncated or scan.truncated
            load.skipped_symlink_count += len(scan.symlinks)
            room = MAX_DIAGNOSTICS - len(load.skipped_symlinks)
            load.skipped_symlinks.extend(f"{scope}:{rel}" for rel in scan.symlinks[:room])
            temps = getattr(scan, "temp_files", None) or []
            load.temp_file_count += len(temps)
            room = MAX_DIAGNOSTICS - len(load.temp_files)
            load.temp_files.extend(f"{scope}:{rel}" for rel in temps[:room])
            key = f"{backend_name}\x00{store.location(scope)}"
            try:
                index = ScopeIndex(cache_dir, key)
                scope_load = _refresh(store, scope, scan.documents, index, load)
            except sqlite3.Error:
                index = ScopeIndex(None, key)  # the cache is unusable: work from memory
                scope_load = _refresh(store, scope, scan.documents, index, load)
            load.scopes.append(scope_load)
    except BaseException:
        load.close()
        raise
    return load


def _refresh(
    store: VaultStore,
    scope: str,
    documents: Sequence[tuple[str, str]],
    index: ScopeIndex,
    load: VaultLoad,
) -> ScopeLoad:
    scope_load = ScopeLoad(scope, index)
    listing = "\n".join(map("\t".join, documents))  # (rel, stamp) pairs
    if index.persistent and _unchanged(index, listing, documents, scope_load, load):
        return scope_load
    known = index.stamps()
    upserts: list[tuple[Any, ...]] = []
    start_bytes, start_invalid = load.scanned_bytes, load.invalid_file_count
    invalid_start = len(load.invalid_files)
    truncated = False
    for rel, stamp in documents:
        if load.scanned_bytes >= MAX_SCAN_BYTES:
            truncated = True
            break
        cached = known.get(rel)
        if cached is not None and cached[0] == stamp and stamp:
            row = None
            nbytes, code = cached[1], cached[2]
        else:
            row = _build_row(store, scope, rel, stamp)
            nbytes, code = row[2], row[3]
        if load.scanned_bytes + nbytes > MAX_SCAN_BYTES:
            truncated = True
            break
        load.scanned_bytes += nbytes
        if row is not None:
            upserts.append(row)
        scope_load.included.append(rel)
        if code:
            _note_invalid(load, scope, rel, code)
    load.truncated = load.truncated or truncated
    # The listing lets the next refresh skip this work when nothing changed; a truncated
    # refresh depends on the other scopes' sizes, and a document without a stamp (changed too
    # recently to trust one, or unreadable) must be read again, so neither is taken as settled.
    settled = not truncated and all(map(_STAMP, documents))
    scan = {
        "scan": listing if settled else None,
        "scan_bytes": load.scanned_bytes - start_bytes,
        "scan_invalid": load.invalid_file_count - start_invalid,
    }
    try:
        index.apply(upserts, set(known) - set(scope_load.included), scan)
    except sqlite3.Error:
        if not index.persistent:
            raise
        # Someone else holds the cache or it broke: redo this scope from memory.
        index.close()
        load.scanned_bytes, load.invalid_file_count = start_bytes, start_invalid
        del load.invalid_files[invalid_start:]
        return _refresh(store, scope, documents, ScopeIndex(None, index.key), load)
    return scope_load


def _unchanged(
    index: ScopeIndex,
    listing: str,
    documents: Sequence[tuple[str, str]],
    scope_load: ScopeLoad,
    load: VaultLoad,
) -> bool:
    """Take the last refresh's outcome when the same files with the same stamps were seen."""
    try:
        meta = index.get_meta("scan", "scan_bytes", "scan_invalid")
        if meta.get("scan") != listing or meta.get("scan_invalid") is None:
            return False
        nbytes = int(meta["scan_bytes"])
        if load.scanned_bytes + nbytes > MAX_SCAN_BYTES:
            return False
        invalid = {}
        if meta["scan_invalid"]:
            invalid = dict(index.query("SELECT rel, code FROM docs WHERE code IS NOT NULL"))
    except sqlite3.Error:
        return False
    load.scanned_bytes += nbytes
    scope_load.included = list(map(_REL, documents))
    if invalid:
        for rel in scope_load.included:
            code = invalid.get(rel)
            if code:
                _note_invalid(load, scope_load.scope, rel, code)
    return True


def _note_invalid(load: VaultLoad, scope: str, rel: str, code: str) -> None:
    load.invalid_file_count += 1
    if len(load.invalid_files) < MAX_DIAGNOSTICS:
        load.invalid_files.append(
            {"path": f"{scope}:{rel}", "code": code, "message": INVALID_MESSAGES[code]}
        )
