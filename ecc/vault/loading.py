"""Loading the requested scopes: scan each through the backend, bring its derived index up to date
and collect the scan's diagnostics, in walk order.

Search, read and doctor all start from a :class:`VaultLoad`. Only documents whose stamp changed
are read and parsed again; an index that cannot be used (locked, broken, no cache dir) is
replaced by one in memory built from the files, with identical results.
"""

from __future__ import annotations

import json
import operator
import os
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
from ecc.vault.index import Checkpoints, RowWriter, ScopeIndex
from ecc.vault.rowbuild import build_rows

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import ScanResult, VaultStore

# Far above the reference's 5,000 entries / 16 MiB, still bounded against hostile vaults.
MAX_FILES = 250_000
MAX_SCAN_BYTES = 1 << 30
MAX_DIAGNOSTICS = 100

INVALID_MESSAGES = {
    "suspected-secret": "Memory document was quarantined.",
    "location-mismatch": "Memory metadata does not match its vault location.",
    "invalid-document": "Memory document is invalid or unreadable.",
}

WRITE_BATCH = 256  # rows written at once while workers build (a chunk's worth)
PENDING_MAX = 4  # write batches held at most: rows wait in memory only that long (no workers)
_REL = operator.itemgetter(0)  # of a scanned (rel, stamp) pair
_STAMP = operator.itemgetter(1)
SCAN_META = "scan"  # the settled listing's digest (:func:`listing_digest`)
SCAN_ID_META = "scan_id"  # the settled state's id (ScopeLoad.settled)
WATCH_META = "scan_watch"  # the watcher's token the settled listing was walked under, and extras
RELS_META = "scan_rels"  # the settled listing's rels, NUL-separated (no file name holds a NUL)


def listing_digest(listing: str) -> str:
    """What the index keeps of a settled listing (every rel and stamp): its BLAKE2b, not the
    listing, which made a tenth of the index (3.6 MB at 35,000 files) and was written with
    every refresh. The built-in module where there is one: ``hashlib`` loads OpenSSL."""
    try:
        from _blake2 import blake2b  # CPython
    except ImportError:
        from hashlib import blake2b
    return str(blake2b(listing.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest())


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

    __slots__ = ("_included", "_rels", "index", "scope", "settled")

    def __init__(self, scope: str, index: ScopeIndex) -> None:
        self.scope = scope
        self.index = index
        self._included: list[str] | None = []
        self._rels = ""  # NUL-separated, when ``_included`` is None: split only if asked for
        # The id of the index's settled state this load used (its rows and listing), or None:
        # a new random id comes with every settled refresh, so results derived from the rows
        # alone (the doctor's report) can be cached under it.
        self.settled: str | None = None

    @property
    def included(self) -> list[str]:
        """The rels of the documents included, in walk order (search never asks: doctor does)."""
        if self._included is None:
            self._included = self._rels.split("\0") if self._rels else []
        return self._included

    @included.setter
    def included(self, rels: list[str]) -> None:
        self._included = rels

    def include_joined(self, rels: str) -> None:
        self._included, self._rels = None, rels


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
        self.checkpoints = Checkpoints()  # of the indexes this load wrote

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
        try:
            self.checkpoints.finish()
        finally:
            for scope in self.scopes:
                scope.index.close()


def load_scopes(
    store: VaultStore, backend_name: str, cache_dir: Path | None, requested: list[str]
) -> VaultLoad:
    """Scan ``requested`` (validated scopes) in ``store`` and refresh their indexes.

    A scope whose tree watcher vouches that nothing changed since its index's last settled walk
    is taken from the index without a walk (:func:`_watched_unchanged`). The caller keeps the
    store open for the call and closes the load once done with it.
    """
    load = VaultLoad()
    visited = 0
    tokens = _watch_tokens(store, cache_dir, requested)
    try:
        for scope in requested:
            if load.truncated or visited >= MAX_FILES or load.scanned_bytes >= MAX_SCAN_BYTES:
                load.truncated = True
                break
            key = f"{backend_name}\x00{store.location(scope)}"
            token = tokens.get(scope)
            if token is not None:
                seen = _watched_unchanged(cache_dir, key, scope, token, load, MAX_FILES - visited)
                if seen is not None:
                    visited += seen
                    continue
            try:
                scan = store.scan(scope, MAX_FILES - visited)
            except OSError as exc:
                raise EccError(
                    f"Memory scope {scope} could not be read: {exc.strerror or exc}."
                ) from None
            visited += scan.visited
            load.truncated = load.truncated or scan.truncated
            temps = getattr(scan, "temp_files", None) or []
            _note_scan(load, scope, scan.symlinks, temps)
            try:
                index = ScopeIndex(cache_dir, key)
                scope_load = _refresh(store, scope, scan, index, load, token)
            except sqlite3.Error:
                index = ScopeIndex(None, key)  # the cache is unusable: work from memory
                scope_load = _refresh(store, scope, scan, index, load, None)
            load.scopes.append(scope_load)
        load.checkpoints.start()  # beside the search, or whatever the caller does next
    except BaseException:
        load.close()
        raise
    return load


def _note_scan(load: VaultLoad, scope: str, symlinks: list[str], temps: list[str]) -> None:
    load.skipped_symlink_count += len(symlinks)
    room = MAX_DIAGNOSTICS - len(load.skipped_symlinks)
    load.skipped_symlinks.extend(f"{scope}:{rel}" for rel in symlinks[:room])
    load.temp_file_count += len(temps)
    room = MAX_DIAGNOSTICS - len(load.temp_files)
    load.temp_files.extend(f"{scope}:{rel}" for rel in temps[:room])


def _watch_tokens(
    store: VaultStore, cache_dir: Path | None, requested: list[str]
) -> dict[str, str | None]:
    """Each scope's change token from the tree watcher (one round trip), where there is one."""
    watch_root = getattr(store, "watch_root", None)  # optional: backends with a local tree
    if cache_dir is None or watch_root is None:
        return {}
    roots = {scope: root for scope in requested if (root := watch_root(scope)) is not None}
    if not roots:
        return {}
    from ecc.runtime import watchclient

    return dict(zip(roots, watchclient.tokens(cache_dir, list(roots.values())), strict=True))


def _watched_unchanged(
    cache_dir: Path | None, key: str, scope: str, token: str, load: VaultLoad, budget: int
) -> int | None:
    """Load ``scope`` from its index alone when its last settled walk started under ``token``
    (the watcher saw no change since); returns the entries that walk visited, or None."""
    try:
        index = ScopeIndex(cache_dir, key)
    except sqlite3.Error:
        return None
    kept = False
    try:
        if not index.persistent:
            return None
        meta = index.get_meta(RELS_META, "scan_bytes", "scan_invalid", WATCH_META, SCAN_ID_META)
        watch = json.loads(meta.get(WATCH_META) or "null")
        rels = meta.get(RELS_META)
        if not isinstance(watch, dict) or watch.get("token") != token or rels is None:
            return None
        visited, symlinks, temps = watch["visited"], watch["symlinks"], watch["temp_files"]
        if type(visited) is not int or visited >= budget:
            return None  # a walk with this budget may stop short: let it
        if not all(isinstance(rel, str) for rel in (*symlinks, *temps)):
            return None
        scope_load = ScopeLoad(scope, index)
        scope_load.include_joined(rels)
        if not _take_settled(index, meta, scope_load, load):
            return None
        _note_scan(load, scope, symlinks, temps)
        load.scopes.append(scope_load)
        kept = True
        return visited
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None
    finally:
        if not kept:
            index.close()


def _refresh(
    store: VaultStore,
    scope: str,
    scan: ScanResult,
    index: ScopeIndex,
    load: VaultLoad,
    token: str | None,
) -> ScopeLoad:
    scope_load = ScopeLoad(scope, index)
    documents = scan.documents
    listing = "\n".join(map("\t".join, documents))  # (rel, stamp) pairs
    watch = _watch_meta(scan, listing, token)
    digest = listing_digest(listing)
    if index.persistent and _unchanged(index, digest, documents, scope_load, load, watch):
        return scope_load
    known = index.stamps()
    start_bytes, start_invalid = load.scanned_bytes, load.invalid_file_count
    invalid_start = len(load.invalid_files)
    truncated = False
    todo = [
        (rel, stamp)
        for rel, stamp in documents
        if (cached := known.get(rel)) is None or cached[0] != stamp or not stamp
    ]
    # The rows go to the index as they come (one transaction, committed at the end): while it
    # waits for forked workers, the caller writes the rows it has instead of idling.
    writer = RowWriter(index)
    checkpoints = load.checkpoints
    checkpoints.settle()  # the build may fork workers: no thread may be running then
    # in walk order, as the loop below asks for them; forked workers help with many files of a
    # backend with a local tree (``watch_root``), whose reads work in a forked child. An earlier
    # scope's checkpoint starts once they are forked, and runs beside the build.
    built = build_rows(
        store,
        scope,
        todo,
        parallel=getattr(store, "watch_root", None) is not None,
        idle=lambda: writer.flush(WRITE_BATCH),
        forked=checkpoints.start,
    )
    try:
        try:
            for rel, stamp in documents:
                if load.scanned_bytes >= MAX_SCAN_BYTES:
                    truncated = True
                    break
                cached = known.get(rel)
                if cached is not None and cached[0] == stamp and stamp:
                    row = None
                    nbytes, code = cached[1], cached[2]
                else:
                    row = next(built)
                    nbytes, code = row[2], row[3]
                if load.scanned_bytes + nbytes > MAX_SCAN_BYTES:
                    truncated = True
                    break
                load.scanned_bytes += nbytes
                if row is not None:
                    pending = writer.pending
                    pending.append(row)
                    if len(pending) >= PENDING_MAX * WRITE_BATCH:
                        writer.flush()  # bounded memory when nothing else writes them
                scope_load.included.append(rel)
                if code:
                    _note_invalid(load, scope, rel, code)
        finally:
            built.close()
        load.truncated = load.truncated or truncated
        # The listing lets the next refresh skip this work when nothing changed; a truncated
        # refresh depends on the other scopes' sizes, and a document without a stamp (changed
        # too recently to trust one, or unreadable) must be read again, so neither is taken as
        # settled.
        settled = not truncated and all(map(_STAMP, documents))
        settled_id = os.urandom(12).hex() if settled else None
        meta = {
            SCAN_META: digest if settled else None,
            SCAN_ID_META: settled_id,
            RELS_META: "\0".join(scope_load.included) if settled else None,
            "scan_bytes": load.scanned_bytes - start_bytes,
            "scan_invalid": load.invalid_file_count - start_invalid,
            WATCH_META: watch if settled else None,
        }
        deferred = index.defer_checkpoints()
        writer.finish(set(known) - set(scope_load.included), meta)
        if deferred:
            checkpoints.add(index)
    except sqlite3.Error:
        if not index.persistent:
            raise
        # Someone else holds the cache or it broke: redo this scope from memory.
        writer.abort()
        index.close()
        load.scanned_bytes, load.invalid_file_count = start_bytes, start_invalid
        del load.invalid_files[invalid_start:]
        return _refresh(store, scope, scan, ScopeIndex(None, index.key), load, None)
    finally:
        writer.abort()  # a refresh stopped early (interrupted) leaves the index as it was
    if index.persistent:
        scope_load.settled = settled_id
    return scope_load


def _watch_meta(scan: ScanResult, listing: str, token: str | None) -> str | None:
    """What a later load needs to stand in for this walk while ``token`` holds (the watcher's
    token from before the walk), or None when this walk cannot stand for the tree: truncated,
    or a name holding a newline (the listing's rels could not be told apart)."""
    if token is None or scan.truncated or listing.count("\n") != max(len(scan.documents) - 1, 0):
        return None
    temps = getattr(scan, "temp_files", None) or []
    return json.dumps(
        {"token": token, "visited": scan.visited, "symlinks": scan.symlinks, "temp_files": temps}
    )


def _unchanged(
    index: ScopeIndex,
    digest: str,
    documents: Sequence[tuple[str, str]],
    scope_load: ScopeLoad,
    load: VaultLoad,
    watch: str | None,
) -> bool:
    """Take the last refresh's outcome when the same files with the same stamps were seen
    (the listing's ``digest`` is the one kept)."""
    try:
        meta = index.get_meta(
            SCAN_META, "scan_bytes", "scan_invalid", WATCH_META, RELS_META, SCAN_ID_META
        )
    except sqlite3.Error:
        return False
    if meta.get(SCAN_META) != digest:
        return False
    scope_load.included = list(map(_REL, documents))
    if not _take_settled(index, meta, scope_load, load):
        scope_load.included = []
        return False
    settled_id = meta.get(SCAN_ID_META)
    writes = []
    if not settled_id:  # an index settled before ids were kept
        settled_id = os.urandom(12).hex()
        writes.append((SCAN_ID_META, settled_id))
    if watch is not None and (meta.get(WATCH_META) != watch or meta.get(RELS_META) is None):
        # The watcher's count moved (an edit undone, a temp file come and gone) but the tree is
        # as the index has it: vouch for it under the new token, if the listing is still this
        # (each statement is atomic; the rels are those of the listing, written first).
        writes += [(RELS_META, "\0".join(scope_load.included)), (WATCH_META, watch)]
    if writes:
        try:
            for key, value in writes:
                index.query(
                    "INSERT OR REPLACE INTO meta SELECT ?, ? "
                    f"WHERE (SELECT value FROM meta WHERE key = '{SCAN_META}') = ?",
                    (key, value, digest),
                )
        except sqlite3.Error:
            settled_id = None  # only speed is lost: the next load walks again
    scope_load.settled = settled_id
    return True


def _take_settled(
    index: ScopeIndex, meta: dict[str, Any], scope_load: ScopeLoad, load: VaultLoad
) -> bool:
    """Count a settled refresh's bytes and invalid documents (from ``meta``) into ``load``,
    for the documents ``scope_load`` includes."""
    try:
        if meta.get("scan_invalid") is None:
            return False
        nbytes = int(meta["scan_bytes"])
        if load.scanned_bytes + nbytes > MAX_SCAN_BYTES:
            return False
        invalid = {}
        if meta["scan_invalid"]:
            invalid = dict(index.query("SELECT rel, code FROM docs WHERE code IS NOT NULL"))
    except (sqlite3.Error, ValueError, TypeError):
        return False
    load.scanned_bytes += nbytes
    scope_load.settled = meta.get(SCAN_ID_META)
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
