"""The vault service: init, save, handoff, search, read and doctor over any memory backend.

The CLI, the MCP server and the dashboard all call :class:`VaultService`; storage is reached only
through the backend returned by the ``ecc_memory_backend`` hook. Every call resolves roots afresh
and loads the requested scopes (``ecc.vault.loading``: one stat per file, the derived index for
the parsed content); the queries over a load live in ``search``, ``read`` and ``doctor``.
Saving (a handoff is a save of kind ``handoff``) and init are here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ecc.contract.errors import EccError
from ecc.vault.format import (
    MEMORY_SCHEMA_VERSION,
    MEMORY_SCOPES,
    new_memory_id,
    normalize_memory,
    now_timestamp,
    serialize_memory_document,
)
from ecc.vault.loading import VaultLoad, load_scopes, validate_scopes
from ecc.vault.search import search_memories
from ecc.vault.secrets import find_secrets_in_memory

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import MemoryBackend, VaultStore


class VaultService:
    """All vault operations for one working directory and environment."""

    def __init__(
        self,
        backend: MemoryBackend,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        cache_dir: Path | bool | None = True,
        ranker: str = "",
        ranker_settings: dict[str, Any] | None = None,
    ) -> None:
        self.backend = backend
        # the configured memory ranker (``[memory] ranker``): "" is the exact search alone
        self.ranker = ranker
        self.ranker_settings = dict(ranker_settings or {})
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

    def remove_stale_temps(self, scopes: Any = None) -> list[str]:
        """Remove writers' temp files older than ``safefs.STALE_TEMP_SECONDS`` (left by a
        writer killed mid-save); return their vault paths. Nothing else is touched."""
        from ecc.vault.loading import MAX_FILES
        from ecc.vault.safefs import STALE_TEMP_SECONDS

        requested = validate_scopes(scopes)
        store = self._open()
        removed: list[str] = []
        try:
            remove = getattr(store, "remove_stale_temp", None)
            for scope in requested:
                if remove is None:
                    break
                for rel in store.scan(scope, MAX_FILES).temp_files:
                    if remove(scope, rel, STALE_TEMP_SECONDS):
                        removed.append(f"{scope}:{rel}")
        except OSError as exc:
            raise EccError(
                f"Memory temp files could not be removed: {exc.strerror or exc}."
            ) from None
        finally:
            store.close()
        return removed

    # -- queries -----------------------------------------------------------------------------

    def load(self, scopes: Any = None) -> VaultLoad:
        """Scan the scopes, refresh their indexes, and collect diagnostics in walk order."""
        requested = validate_scopes(scopes)
        store = self._open()
        try:
            return load_scopes(store, self.backend.name, self.cache_dir, requested)
        finally:
            store.close()

    def search(
        self,
        query: Any = "",
        *,
        scopes: Any = None,
        kinds: Any = None,
        trust: Any = None,
        target_harness: Any = None,
        limit: Any = None,
        ranker: str | None = None,
    ) -> dict[str, Any]:
        """Rank active memories by the reference's lexical score; newest first on ties.

        A memory ranker (``ranker``, else the configured one) re-orders the exact search's best
        matches and the memories it missed (``ecc.vault.rerank``).
        """
        name = self.ranker if ranker is None else ranker
        chosen = None
        if name:
            from ecc.vault.rerank import rerank_search

            chosen = (name, self.ranker_settings, rerank_search)
        return search_memories(
            self,
            query,
            scopes=scopes,
            kinds=kinds,
            trust=trust,
            target_harness=target_harness,
            limit=limit,
            ranker=chosen,
        )

    def read(
        self, memory_id: Any, *, scopes: Any = None, target_harness: Any = None
    ) -> dict[str, Any]:
        """One memory by ID (any status) with its active backlinks."""
        from ecc.vault.read import read_memory

        return read_memory(self, memory_id, scopes=scopes, target_harness=target_harness)

    def doctor(self, *, scopes: Any = None, target_harness: Any = None) -> dict[str, Any]:
        """Report invalid files, duplicate IDs, broken links and symlinks. Never modifies."""
        from ecc.vault.doctor import diagnose

        return diagnose(self, scopes=scopes, target_harness=target_harness)


def memory_settings() -> tuple[str, dict[str, Any]]:
    """``memory.backend`` and ``memory.settings`` from the validated config.

    Memory commands are on agents' hot paths: the cached config view avoids importing pydantic
    (a miss or a changed layer file goes through the full loader).
    """
    return _backend_of(_memory_table())


def memory_ranker() -> tuple[str, dict[str, Any]]:
    """``memory.ranker`` and ``memory.ranker_settings`` (the same cached view)."""
    return _ranker_of(_memory_table())


def _memory_table() -> Any:
    from ecc.runtime.config import view as fastconfig

    return fastconfig.view()["memory"]


def _backend_of(memory: Any) -> tuple[str, dict[str, Any]]:
    return str(memory["backend"]), _plain(memory["settings"])


def _ranker_of(memory: Any) -> tuple[str, dict[str, Any]]:
    return str(memory.get("ranker") or ""), _plain(memory.get("ranker_settings") or {})


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

    memory = _memory_table()  # one read of the config view: this is a search's hot path
    name, settings = _backend_of(memory)
    ranker, ranker_settings = _ranker_of(memory)
    return VaultService(
        load_backend(name, settings),
        cwd=cwd,
        env=env,
        ranker=ranker,
        ranker_settings=ranker_settings,
    )
