"""A derived, disposable index of one scope's documents (SQLite in the user cache dir).

The Markdown files stay the source of truth. Each row remembers the file's stamp (device, inode,
size, mtime, ctime) and everything search/read/doctor need from the parsed document; a row whose
stamp no longer matches is re-read. Deleting the cache (or failing to open it) only costs time:
the service falls back to an in-memory index built from the files, with identical results.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

INDEX_VERSION = "ecc-memory-index-1"

COLUMNS = (
    "rel",
    "stamp",
    "nbytes",
    "code",
    "id",
    "id_key",
    "kind",
    "status",
    "updated_at",
    "summary",
    "title_l",
    "tags_d",
    "meta_l",
    "targets_d",
    "links_d",
    "body",
    "body_l",
    "body_len",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
  rel TEXT PRIMARY KEY, stamp TEXT NOT NULL, nbytes INTEGER NOT NULL, code TEXT,
  id TEXT, id_key TEXT, kind TEXT, status TEXT, updated_at TEXT, summary TEXT,
  title_l TEXT, tags_d TEXT, meta_l TEXT, targets_d TEXT, links_d TEXT,
  body TEXT, body_l TEXT, body_len INTEGER
);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
"""


def index_path(cache_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return cache_dir / "memory-index" / f"{digest}.sqlite3"


class ScopeIndex:
    """The index of one scope root; ``persistent`` is False when only memory was usable."""

    def __init__(self, cache_dir: Path | None, key: str) -> None:
        self.key = key
        self.persistent = False
        self.db: sqlite3.Connection | None = None
        if cache_dir is not None:
            path = index_path(cache_dir, key)
            for _attempt in range(2):
                try:
                    self.db = self._open(path)
                    self.persistent = True
                    break
                except (sqlite3.Error, OSError):
                    self._discard(path)
        if self.db is None:
            self.db = self._connect(":memory:")

    def _connect(self, target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=10, isolation_level=None, check_same_thread=False)
        db.executescript(_SCHEMA)
        return db

    def _open(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        db = sqlite3.connect(str(path), timeout=10, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout=10000")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            owner = db.execute("SELECT value FROM meta WHERE key='root'").fetchone()
            if row is None or row[0] != INDEX_VERSION or owner is None or owner[0] != self.key:
                db.execute("BEGIN IMMEDIATE")
                db.execute("DELETE FROM docs")
                db.execute("INSERT OR REPLACE INTO meta VALUES('version', ?)", (INDEX_VERSION,))
                db.execute("INSERT OR REPLACE INTO meta VALUES('root', ?)", (self.key,))
                db.execute("COMMIT")
            db.execute("SELECT count(*) FROM docs").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _discard(path: Path) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{path}{suffix}")
            except OSError:
                pass

    def stamps(self) -> dict[str, tuple[str, int, str | None]]:
        assert self.db is not None
        return {
            rel: (stamp, nbytes, code)
            for rel, stamp, nbytes, code in self.db.execute(
                "SELECT rel, stamp, nbytes, code FROM docs"
            )
        }

    def apply(self, upserts: Sequence[tuple[Any, ...]], deletions: Iterable[str]) -> None:
        """Replace changed rows and drop vanished ones in one transaction."""
        assert self.db is not None
        deletions = list(deletions)
        if not upserts and not deletions:
            return
        placeholders = ",".join("?" for _ in COLUMNS)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("DELETE FROM docs WHERE rel = ?", [(rel,) for rel in deletions])
            self.db.executemany(
                f"INSERT OR REPLACE INTO docs({','.join(COLUMNS)}) VALUES({placeholders})",
                upserts,
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        assert self.db is not None
        return self.db.execute(sql, params).fetchall()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
