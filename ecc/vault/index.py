"""A derived, disposable index of one scope's documents (SQLite in the user cache dir).

The Markdown files stay the source of truth. Each row remembers the file's stamp (device, inode,
size, mtime, ctime) and everything search/read/doctor need from the parsed document; a row whose
stamp no longer matches is re-read. Deleting the cache (or failing to open it) only costs time:
the service falls back to an in-memory index built from the files, with identical results.

Besides the rows, the index keeps a *scan digest* (a hash of every file name and stamp seen by
the last refresh, so an unchanged vault is recognised without comparing rows one by one) and the
*segment* that ``ecc.vault.ranking`` scores searches from. A changed file gets a new row with a
higher ``docid``: rows above the segment's last docid are the not-yet-merged delta, and a trigger
records every removed row so the segment can ignore it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

INDEX_VERSION = "ecc-memory-index-2"

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
    "terms",
    "body",
    "body_l",
    "body_len",
)
DOC_COLUMNS = COLUMNS[:16]  # the rest live in ``bodies``: scans of ``docs`` stay small
_BODY_AT = len(DOC_COLUMNS)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value BLOB)",
    """CREATE TABLE IF NOT EXISTS docs(
      docid INTEGER PRIMARY KEY AUTOINCREMENT,
      rel TEXT NOT NULL UNIQUE, stamp TEXT NOT NULL, nbytes INTEGER NOT NULL, code TEXT,
      id TEXT, id_key TEXT, kind TEXT, status TEXT, updated_at TEXT, summary TEXT,
      title_l TEXT, tags_d TEXT, meta_l TEXT, targets_d TEXT, links_d TEXT, terms TEXT)""",
    "CREATE INDEX IF NOT EXISTS docs_id ON docs(id)",
    """CREATE TABLE IF NOT EXISTS bodies(
      docid INTEGER PRIMARY KEY, body TEXT, body_l TEXT, body_len INTEGER)""",
    "CREATE TABLE IF NOT EXISTS removed(docid INTEGER PRIMARY KEY)",
    """CREATE TABLE IF NOT EXISTS seg_keys(
      key TEXT PRIMARY KEY, slots BLOB, vals BLOB) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS docs_removed AFTER DELETE ON docs BEGIN
      DELETE FROM bodies WHERE docid = old.docid;
      INSERT OR IGNORE INTO removed(docid) VALUES (old.docid);
    END""",
)


def _create_tables(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        db.execute(statement)


def index_path(cache_dir: Path, key: str) -> Path:
    from ecc.runtime.paths import sha256_hex

    digest = sha256_hex(key)[:32]
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
        _create_tables(db)
        return db

    def _open(self, path: Path) -> sqlite3.Connection:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except FileNotFoundError:
            from ecc.runtime.paths import ensure_private_dir

            ensure_private_dir(path.parent)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        db = sqlite3.connect(str(path), timeout=10, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout=10000")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            meta = self._meta(db)
            if meta.get("version") != INDEX_VERSION or meta.get("root") != self.key:
                db.execute("BEGIN IMMEDIATE")
                for table in ("docs", "bodies", "meta", "removed", "seg_keys"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.execute("DROP TRIGGER IF EXISTS docs_removed")
                _create_tables(db)
                db.execute("INSERT OR REPLACE INTO meta VALUES('version', ?)", (INDEX_VERSION,))
                db.execute("INSERT OR REPLACE INTO meta VALUES('root', ?)", (self.key,))
                db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _meta(db: sqlite3.Connection) -> dict[str, Any]:
        try:
            return dict(
                db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('version', 'root')"
                ).fetchall()
            )
        except sqlite3.OperationalError:
            return {}  # a new file, or not ours: (re)built from scratch

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

    def get_meta(self, *keys: str) -> dict[str, Any]:
        assert self.db is not None
        marks = ",".join("?" for _ in keys)
        return dict(self.db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", keys))

    def apply(
        self,
        upserts: Sequence[tuple[Any, ...]],
        deletions: Iterable[str],
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Replace changed rows, drop vanished ones and record ``meta``, in one transaction.

        A changed row is deleted and inserted again (never updated in place) so it gets a new
        docid: the ranking segment tells its own rows from newer ones by that number.
        """
        assert self.db is not None
        deletions = list(deletions)
        if not upserts and not deletions and not meta:
            return
        marks = ",".join("?" for _ in DOC_COLUMNS)
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                "DELETE FROM docs WHERE rel = ?",
                [(rel,) for rel in deletions] + [(row[0],) for row in upserts],
            )
            for row in upserts:
                docid = db.execute(
                    f"INSERT INTO docs({','.join(DOC_COLUMNS)}) VALUES({marks})", row[:_BODY_AT]
                ).lastrowid
                if row[3] is None:  # valid documents only: bodies are never shown otherwise
                    db.execute("INSERT INTO bodies VALUES(?, ?, ?, ?)", (docid, *row[_BODY_AT:]))
            for key, value in (meta or {}).items():
                db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        assert self.db is not None
        return self.db.execute(sql, params).fetchall()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
