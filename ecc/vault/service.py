"""The vault service: init, save, handoff, search, read and doctor over any memory backend.

The CLI and the MCP server both call this module; storage is reached only through the backend
returned by the ``ecc_memory_backend`` hook. Every call resolves roots afresh, scans the
requested scopes (cheap: one stat per file) and consults the derived index for the parsed
content, re-reading only documents whose stamp changed.
"""

from __future__ import annotations

import json
import operator
import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ecc.contract.errors import EccError
from ecc.vault import ranking
from ecc.vault.format import (
    DEFAULT_RECALL_SCOPES,
    JS_WHITESPACE,
    MAX_DOCUMENT_BYTES,
    MEMORY_KINDS,
    MEMORY_SCHEMA_VERSION,
    MEMORY_SCOPES,
    MEMORY_TRUST_STATES,
    MemoryFormatError,
    as_enum,
    as_memory_id,
    as_slug,
    id_sort_key,
    js_trim,
    new_memory_id,
    normalize_memory,
    now_timestamp,
    parse_memory_document,
    serialize_memory_document,
    summary,
    utf16_length,
)
from ecc.vault.index import ScopeIndex
from ecc.vault.ranking import WORD_RUN
from ecc.vault.secrets import find_secrets_in_memory

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import MemoryBackend, VaultStore

# Far above the reference's 5,000 entries / 16 MiB, still bounded against hostile vaults.
MAX_FILES = 250_000
MAX_SCAN_BYTES = 1 << 30
MAX_DIAGNOSTICS = 100
MAX_RESULTS = 100
DEFAULT_LIMIT = 20
MAX_QUERY_CHARS = 500
EXCERPT_CHARS = 240

INVALID_MESSAGES = {
    "suspected-secret": "Memory document was quarantined.",
    "location-mismatch": "Memory metadata does not match its vault location.",
    "invalid-document": "Memory document is invalid or unreadable.",
}


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


def tokenize(text: str) -> list[str]:
    """Lower-cased maximal runs of Unicode letters, numbers, ``_`` and ``-``."""
    return WORD_RUN.findall(text.lower())


_REL = operator.itemgetter(0)  # of a scanned (rel, stamp) pair
_WHITESPACE_RUN = re.compile(f"[{JS_WHITESPACE}]+")


def _collapse(text: str) -> str:
    return js_trim(_WHITESPACE_RUN.sub(" ", text))


def make_excerpt(body: str, query: str) -> str:
    """Up to 240 UTF-16 units of the collapsed body around the first query token."""
    text = _collapse(body)
    if utf16_length(text) <= EXCERPT_CHARS:
        return text
    lowered = text.lower()
    positions = [lowered.find(token) for token in tokenize(js_trim(query))]
    positions = [position for position in positions if position >= 0]
    index16 = utf16_length(lowered[: min(positions)]) if positions else 0
    start = max(0, index16 - 60)
    units = text.encode("utf-16-le")
    total = len(units) // 2
    end = min(total, start + EXCERPT_CHARS)
    piece = units[start * 2 : end * 2].decode("utf-16-le", "ignore")  # never split a pair
    return ("…" if start > 0 else "") + piece + ("…" if start + EXCERPT_CHARS < total else "")


def normalize_limit(limit: Any) -> int:
    if limit is None or isinstance(limit, bool):
        return DEFAULT_LIMIT
    try:
        value = int(limit)
    except (TypeError, ValueError, OverflowError):
        return DEFAULT_LIMIT
    if value == 0:
        return DEFAULT_LIMIT
    return max(1, min(MAX_RESULTS, value))


def validate_query(query: Any) -> str:
    text = js_trim(query) if isinstance(query, str) else ""
    if utf16_length(text) > MAX_QUERY_CHARS:
        raise MemoryFormatError(
            f"memory search query is too long (maximum {MAX_QUERY_CHARS} characters)."
        )
    if any(
        ord(ch) <= 0x1F
        or 0x7F <= ord(ch) <= 0x9F
        or 0x202A <= ord(ch) <= 0x202E
        or 0x2066 <= ord(ch) <= 0x2069
        or 0xD800 <= ord(ch) <= 0xDFFF
        for ch in text
    ):
        raise MemoryFormatError("memory search query must not contain control characters.")
    return text


def _rank_order(rows: list[Any]) -> None:
    """Sort ``(score, summary, updated_at, id_key, ...)`` rows: best score, newer, then ID."""
    rows.sort(key=lambda row: row[3])  # id key ascending
    rows.sort(key=lambda row: row[2], reverse=True)  # newer first
    rows.sort(key=lambda row: row[0], reverse=True)  # best score first


def _delimited(values: Sequence[str]) -> str:
    return "\n" + "".join(f"{value}\n" for value in values)


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


class VaultService:
    """All vault operations for one working directory and environment."""

    def __init__(
        self,
        backend: MemoryBackend,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        cache_dir: Path | bool | None = True,
    ) -> None:
        self.backend = backend
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.env = dict(os.environ if env is None else env)
        if cache_dir is True:
            from ecc.runtime import paths

            cache_dir = paths.cache_dir()
        self.cache_dir: Path | None = cache_dir or None

    def _open(self) -> VaultStore:
        try:
            return self.backend.open(self.cwd, self.env)
        except OSError as exc:
            raise EccError(f"Memory vault could not be opened: {exc.strerror or exc}.") from None

    # -- writes ------------------------------------------------------------------------------

    def init(self, scopes: Any = None) -> dict[str, Any]:
        """Create the scope roots and kind directories (idempotent; project gets .gitignore)."""
        requested = validate_scopes(scopes)
        store = self._open()
        try:
            directories: list[str] = []
            for scope in requested:
                try:
                    directories.extend(store.init(scope))
                except OSError as exc:
                    raise EccError(
                        f"Memory scope {scope} could not be initialized: {exc.strerror or exc}."
                    ) from None
            roots = {scope: store.location(scope) for scope in MEMORY_SCOPES}
        finally:
            store.close()
        return {
            "schemaVersion": "ecc.memory.init.v1",
            "scopes": requested,
            "roots": roots,
            "directories": directories,
        }

    def save(
        self,
        data: Mapping[str, Any],
        *,
        now: Callable[[], str] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> dict[str, Any]:
        """Validate, refuse secrets, then write create-only. Returns memory, vault path, file."""
        stamp = now() if now else now_timestamp()

        def pick(key: str, default: Any) -> Any:
            value = data.get(key)
            return default if value is None else value

        memory_id = data.get("id")
        if memory_id is None:
            memory_id = id_factory() if id_factory else new_memory_id(stamp)
        memory = normalize_memory(
            {
                "schema": MEMORY_SCHEMA_VERSION,
                "id": memory_id,
                "title": data.get("title"),
                "kind": pick("kind", "note"),
                "scope": pick("scope", "project"),
                "trust": "unreviewed",
                "status": "active",
                "sourceHarness": pick("sourceHarness", "unknown"),
                "targetHarnesses": list(pick("targetHarnesses", ["all"])),
                "tags": list(pick("tags", [])),
                "links": list(pick("links", [])),
                "createdAt": stamp,
                "updatedAt": stamp,
                "body": data.get("body"),
            }
        )
        labels = find_secrets_in_memory(memory)
        if labels:
            raise EccError(
                f"Refusing to save memory containing a suspected secret ({', '.join(labels)})."
            )
        text = serialize_memory_document(memory)
        scope, kind_dir, name = memory["scope"], f"{memory['kind']}s", f"{memory['id']}.md"
        store = self._open()
        try:
            rel = store.create(
                scope,
                kind_dir,
                name,
                text,
                f"Memory {memory['id']} already exists; writes are create-only.",
            )
            location = store.location(scope)
        except OSError as exc:
            raise EccError(f"Memory could not be written: {exc.strerror or exc}.") from None
        finally:
            store.close()
        return {
            "memory": memory,
            "path": f"{scope}:{rel}",
            "file": os.path.join(location, *rel.split("/")),
        }

    # -- loading -----------------------------------------------------------------------------

    def load(self, scopes: Any = None) -> VaultLoad:
        """Scan the scopes, refresh their indexes, and collect diagnostics in walk order."""
        requested = validate_scopes(scopes)
        store = self._open()
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
                key = f"{self.backend.name}\x00{store.location(scope)}"
                try:
                    index = ScopeIndex(self.cache_dir, key)
                    scope_load = self._refresh(store, scope, scan.documents, index, load)
                except sqlite3.Error:
                    index = ScopeIndex(None, key)  # the cache is unusable: work from memory
                    scope_load = self._refresh(store, scope, scan.documents, index, load)
                load.scopes.append(scope_load)
        except BaseException:
            load.close()
            raise
        finally:
            store.close()
        return load

    def _refresh(
        self,
        store: VaultStore,
        scope: str,
        documents: Sequence[tuple[str, str]],
        index: ScopeIndex,
        load: VaultLoad,
    ) -> ScopeLoad:
        scope_load = ScopeLoad(scope, index)
        listing = "\n".join(map("\t".join, documents))  # (rel, stamp) pairs
        if index.persistent and self._unchanged(index, listing, documents, scope_load, load):
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
                row = self._build_row(store, scope, rel, stamp)
                nbytes, code = row[2], row[3]
            if load.scanned_bytes + nbytes > MAX_SCAN_BYTES:
                truncated = True
                break
            load.scanned_bytes += nbytes
            if row is not None:
                upserts.append(row)
            scope_load.included.append(rel)
            if code:
                self._note_invalid(load, scope, rel, code)
        load.truncated = load.truncated or truncated
        # The listing lets the next refresh skip this work when nothing changed; a truncated
        # refresh depends on the other scopes' sizes, so it is never taken as settled.
        scan = {
            "scan": None if truncated else listing,
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
            return self._refresh(store, scope, documents, ScopeIndex(None, index.key), load)
        return scope_load

    def _unchanged(
        self,
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
                    self._note_invalid(load, scope_load.scope, rel, code)
        return True

    @staticmethod
    def _note_invalid(load: VaultLoad, scope: str, rel: str, code: str) -> None:
        load.invalid_file_count += 1
        if len(load.invalid_files) < MAX_DIAGNOSTICS:
            load.invalid_files.append(
                {"path": f"{scope}:{rel}", "code": code, "message": INVALID_MESSAGES[code]}
            )

    @staticmethod
    def _build_row(store: VaultStore, scope: str, rel: str, stamp: str) -> tuple[Any, ...]:
        def invalid(code: str, nbytes: int) -> tuple[Any, ...]:
            return (rel, stamp, nbytes, code, *([None] * 15))

        try:
            text = store.read(scope, rel, MAX_DOCUMENT_BYTES)
        except Exception:
            return invalid("invalid-document", 0)
        nbytes = len(text.encode("utf-8"))
        try:
            memory = parse_memory_document(text, rel)
        except MemoryFormatError:
            return invalid("invalid-document", nbytes)
        if memory["scope"] != scope or rel != f"{memory['kind']}s/{memory['id']}.md":
            return invalid("location-mismatch", nbytes)
        if find_secrets_in_memory(memory):
            return invalid("suspected-secret", nbytes)
        meta = " ".join(
            [memory["kind"], memory["scope"], memory["sourceHarness"], *memory["targetHarnesses"]]
        ).lower()
        body_l = memory["body"].lower()
        return (
            rel,
            stamp,
            nbytes,
            None,
            memory["id"],
            id_sort_key(memory["id"]),
            memory["kind"],
            memory["status"],
            memory["updatedAt"],
            json.dumps(summary(memory), ensure_ascii=False),
            memory["title"].lower(),
            _delimited([tag.lower() for tag in memory["tags"]]),
            meta,
            _delimited(memory["targetHarnesses"]),
            _delimited(memory["links"]),
            ranking.body_terms(body_l),
            memory["body"],
            body_l,
            len(body_l),
        )

    # -- queries -----------------------------------------------------------------------------

    @staticmethod
    def _visibility(target_harness: str | None, params: dict[str, Any]) -> str:
        if target_harness is None:
            return ""
        params["_all"] = "\nall\n"
        params["_harness"] = f"\n{target_harness}\n"
        return " AND (instr(targets_d, :_all) > 0 OR instr(targets_d, :_harness) > 0)"

    def search(
        self,
        query: Any = "",
        *,
        scopes: Any = None,
        kinds: Any = None,
        trust: Any = None,
        target_harness: Any = None,
        limit: Any = None,
    ) -> dict[str, Any]:
        """Rank active memories by the reference's lexical score; newest first on ties."""
        text = validate_query(query)
        kind_list = None
        if kinds is not None:
            if isinstance(kinds, str):
                kinds = [kinds]
            from ecc.vault.format import as_array

            kind_list = as_array(
                list(kinds) if isinstance(kinds, tuple) else kinds,
                "kinds",
                len(MEMORY_KINDS),
                lambda entry: as_enum(entry, "memory kind", MEMORY_KINDS),
            )
        if trust is not None:
            as_enum(trust, "memory trust", MEMORY_TRUST_STATES)  # the only state: no filter
        harness = as_slug(target_harness, "target harness") if target_harness is not None else None
        count = normalize_limit(limit)
        requested = validate_scopes(scopes)
        load = self.load(requested)
        try:
            candidates: list[tuple[int, str, str, str, str, ScopeLoad]] = []
            for scope_load in load.scopes:
                for row in self._rank(scope_load.index, text, kind_list, harness, count):
                    candidates.append((*row, scope_load))
            _rank_order(candidates)
            results = []
            for score, summary_json, _updated, _key, rel, scope_load in candidates[:count]:
                body = scope_load.index.query(
                    "SELECT body FROM bodies JOIN docs USING(docid) WHERE rel = ?", (rel,)
                )[0][0]
                results.append(
                    {
                        "memory": json.loads(summary_json),
                        "score": score,
                        "excerpt": make_excerpt(body, text),
                    }
                )
            return {
                "schemaVersion": "ecc.memory.search.v1",
                "query": query if isinstance(query, str) else "",
                "results": results,
                "diagnostics": load.diagnostics(),
            }
        finally:
            load.close()

    def _rank(
        self,
        index: ScopeIndex,
        text: str,
        kinds: list[str] | None,
        harness: str | None,
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """The scope's best rows: the segment's (rebuilt when stale) merged with the delta's."""
        lowered = text.lower()
        tokens = list(dict.fromkeys(tokenize(lowered)))
        if not index.persistent or not tokens or not all(t in lowered for t in tokens):
            return self._score(index, text, kinds, harness, limit)
        _, size, delta = ranking.segment_state(index)
        if ranking.needs_build(size, delta):
            try:
                ranking.build_segment(index)
            except sqlite3.Error:
                return self._score(index, text, kinds, harness, limit)
        segment = ranking.Segment(index)
        best = segment.top(lowered, tokens, kinds, harness, limit)
        rows = self._score(index, text, kinds, harness, limit, after=segment.last)
        if best:
            scores = dict((docid, score) for score, docid in best)
            marks = ",".join("?" for _ in scores)
            for docid, summary_json, updated_at, id_key, rel in index.query(
                "SELECT docid, summary, updated_at, id_key, rel FROM docs"
                f" WHERE docid IN ({marks})",
                list(scores),
            ):
                rows.append((scores[docid], summary_json, updated_at, id_key, rel))
        _rank_order(rows)
        return rows[:limit]

    def _score(
        self,
        index: ScopeIndex,
        text: str,
        kinds: list[str] | None,
        harness: str | None,
        limit: int,
        *,
        after: int = 0,
    ) -> list[tuple[Any, ...]]:
        """Score rows above docid ``after`` with one SQL expression (the delta, or everything)."""
        params: dict[str, Any] = {"limit": limit, "after": after}
        where = "docid > :after AND code IS NULL AND status = 'active'"
        where += self._visibility(harness, params)
        if kinds is not None:
            names = []
            for number, kind in enumerate(kinds):
                params[f"k{number}"] = kind
                names.append(f":k{number}")
            where += f" AND kind IN ({','.join(names)})"
        if not text:
            score = "0"
        else:
            lowered = text.lower()
            params["q"] = lowered
            parts = [
                "(CASE WHEN instr(title_l, :q) > 0 THEN 20 "
                "WHEN instr(body_l, :q) > 0 THEN 5 ELSE 0 END)"
            ]
            for number, token in enumerate(dict.fromkeys(tokenize(lowered))):
                t = f":t{number}"
                params[f"t{number}"] = token
                params[f"d{number}"] = f"\n{token}\n"
                parts.append(
                    f"(CASE WHEN instr(title_l, {t}) > 0 THEN 8 ELSE 0 END)"
                    f" + (CASE WHEN instr(tags_d, :d{number}) > 0 THEN 6 ELSE 0 END)"
                    f" + (CASE WHEN instr(meta_l, {t}) > 0 THEN 3 ELSE 0 END)"
                    f" + (CASE WHEN instr(body_l, {t}) = 0 THEN 0 ELSE min(5, "
                    f"(body_len - length(replace(body_l, {t}, ''))) / length({t})) END)"
                )
            score = " + ".join(parts)
        having = " WHERE score > 0" if text else ""
        sql = (
            f"SELECT score, summary, updated_at, id_key, rel FROM ("
            f"SELECT ({score}) AS score, summary, updated_at, id_key, rel"
            f" FROM docs JOIN bodies USING(docid) WHERE {where})"
            f"{having} ORDER BY score DESC, updated_at DESC, id_key ASC LIMIT :limit"
        )
        return index.query(sql, params)

    def read(
        self, memory_id: Any, *, scopes: Any = None, target_harness: Any = None
    ) -> dict[str, Any]:
        """One memory by ID (any status) with its active backlinks."""
        wanted = as_memory_id(memory_id)
        harness = as_slug(target_harness, "target harness") if target_harness is not None else None
        load = self.load(validate_scopes(scopes))
        try:
            params: dict[str, Any] = {"id": wanted, "d": f"\n{wanted}\n"}
            visible = self._visibility(harness, params)
            matches = []
            backlinks: list[tuple[str, str]] = []
            for scope_load in load.scopes:
                for rel, summary_json, body in scope_load.index.query(
                    "SELECT rel, summary, body FROM docs JOIN bodies USING(docid)"
                    f" WHERE code IS NULL AND id = :id{visible}",
                    params,
                ):
                    matches.append((scope_load.scope, rel, summary_json, body))
                backlinks.extend(
                    scope_load.index.query(
                        "SELECT id_key, summary FROM docs WHERE code IS NULL AND status = 'active'"
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

    def doctor(self, *, scopes: Any = None, target_harness: Any = None) -> dict[str, Any]:
        """Report invalid files, duplicate IDs, broken links and symlinks. Never modifies."""
        load = self.load(validate_scopes(scopes))
        try:
            harness = (
                as_slug(target_harness, "target harness") if target_harness is not None else None
            )
            params: dict[str, Any] = {}
            visible = self._visibility(harness, params)
            entries: list[tuple[str, str, list[str]]] = []  # (vault path, id, links) load order
            for scope_load in load.scopes:
                rows = {
                    rel: (memory_id, links_d)
                    for rel, memory_id, links_d in scope_load.index.query(
                        f"SELECT rel, id, links_d FROM docs WHERE code IS NULL{visible}", params
                    )
                }
                for rel in scope_load.included:
                    if rel in rows:
                        memory_id, links_d = rows[rel]
                        entries.append(
                            (
                                f"{scope_load.scope}:{rel}",
                                memory_id,
                                [x for x in links_d.split("\n") if x],
                            )
                        )
            paths_by_id: dict[str, list[str]] = {}
            for path, memory_id, _links in entries:
                paths_by_id.setdefault(memory_id, []).append(path)
            duplicates = sorted(
                (
                    {"id": memory_id, "paths": paths}
                    for memory_id, paths in paths_by_id.items()
                    if len(paths) > 1
                ),
                key=lambda item: id_sort_key(item["id"]),
            )
            broken = [
                {"sourceId": memory_id, "targetId": target, "path": path}
                for path, memory_id, links in entries
                for target in links
                if target not in paths_by_id
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
                or len(broken) > MAX_DIAGNOSTICS,
            }
        finally:
            load.close()


def memory_settings() -> tuple[str, dict[str, Any]]:
    """``memory.backend`` and ``memory.settings`` from the validated config.

    Memory commands are on agents' hot paths: the cached config view avoids importing pydantic
    (a miss or a changed layer file goes through the full loader).
    """
    from ecc.runtime.config import view as fastconfig

    memory = fastconfig.view()["memory"]
    return str(memory["backend"]), _plain(memory["settings"])


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def open_cli_service() -> VaultService:
    """The service for ``ecc memory``: a blank root override is an error before anything runs."""
    from ecc.vault.roots import check_root_overrides

    check_root_overrides()
    return open_service()


def open_service(*, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> VaultService:
    """The vault service on the configured backend (obtained through the plugin hook)."""
    from ecc.vault.backend import load_backend

    name, settings = memory_settings()
    return VaultService(load_backend(name, settings), cwd=cwd, env=env)
