"""A derived, disposable index of one scope's documents (SQLite in the user cache dir).

The Markdown files stay the source of truth. Each row remembers the file's stamp (device, inode,
size, mtime, ctime) and everything search/read/doctor need from the parsed document (its summary
and body deflated in ``packed``, ``ecc.vault.packed``); a row whose stamp no longer matches is
re-read. Deleting the cache (or failing to open it) only costs time:
the service falls back to an in-memory index built from the files, with identical results.

Besides the rows, the index keeps a *scan digest* (a hash of every file name and stamp seen by
the last refresh, so an unchanged vault is recognised without comparing rows one by one) and the
*segment* that ``ecc.vault.ranking`` scores searches from. A changed file gets a new row with a
higher ``docid``: rows above the segment's last docid are the not-yet-merged delta, and a trigger
records every removed row so the segment can ignore it.
"""

from __future__ import annotations

import operator
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from ecc.vault import packed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.segment import SegmentBuilder

INDEX_VERSION = "ecc-memory-index-4"

COLUMNS = (
    "rel",
    "stamp",
    "nbytes",
    "code",
    "id_key",  # the id follows from it (a generated column): ``format.id_sort_key``
    "kind",
    "status",
    "updated_at",
    "title_l",
    "tags_d",
    "meta_l",
    "targets_d",
    "links_d",
    "packed",  # ``ecc.vault.packed``: the summary and body, in the ``packed`` table
    "terms",  # the body's word counts, kept in memory for the segment build, never stored
)
DOC_COLUMNS = COLUMNS[:13]
_PACKED_AT = len(DOC_COLUMNS)
# a row's columns in the order ``SegmentBuilder.add`` takes them after the docid
_SEGMENT_FIELDS = operator.itemgetter(3, 6, 5, 11, 8, 9, 10, 7, 4, 14)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value BLOB)",
    """CREATE TABLE IF NOT EXISTS docs(
      docid INTEGER PRIMARY KEY AUTOINCREMENT,
      rel TEXT NOT NULL UNIQUE, stamp TEXT NOT NULL, nbytes INTEGER NOT NULL, code TEXT,
      id_key TEXT, kind TEXT, status TEXT, updated_at TEXT,
      title_l TEXT, tags_d TEXT, meta_l TEXT, targets_d TEXT, links_d TEXT,
      id TEXT GENERATED ALWAYS AS (replace(replace(id_key, char(1), '_'), char(2), '-')))""",
    "CREATE INDEX IF NOT EXISTS docs_id ON docs(id)",
    "CREATE TABLE IF NOT EXISTS packed(docid INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    """CREATE VIEW IF NOT EXISTS texts AS SELECT docid,
      memo_summary(data) AS summary, memo_body(data) AS body, memo_body_l(data) AS body_l,
      length(memo_body_l(data)) AS body_len FROM packed""",
    "CREATE TABLE IF NOT EXISTS removed(docid INTEGER PRIMARY KEY)",
    """CREATE TABLE IF NOT EXISTS seg_keys(
      key TEXT PRIMARY KEY, slots BLOB, vals BLOB) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS docs_removed AFTER DELETE ON docs BEGIN
      DELETE FROM packed WHERE docid = old.docid;
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
        self.path: Path | None = None  # the file of a persistent index
        self.db: sqlite3.Connection | None = None
        # docid -> the body's words and counts (``ranking.body_terms``), of rows this process
        # inserted: the segment build takes them instead of reading every body back (a docid
        # never names other content)
        self.fresh_terms: dict[int, Any] = {}
        if cache_dir is not None:
            path = index_path(cache_dir, key)
            for _attempt in range(2):
                try:
                    self.db = self._open(path)
                    self.persistent = True
                    self.path = path
                    break
                except (sqlite3.Error, OSError):
                    self._discard(path)
        if self.db is None:
            self.db = self._connect(":memory:")

    def _connect(self, target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=10, isolation_level=None, check_same_thread=False)
        packed.register(db)
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
        packed.register(db)
        try:
            db.execute("PRAGMA busy_timeout=10000")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            meta = self._meta(db)
            if meta.get("version") != INDEX_VERSION or meta.get("root") != self.key:
                db.execute("BEGIN IMMEDIATE")
                db.execute("DROP VIEW IF EXISTS texts")
                for table in ("docs", "bodies", "packed", "meta", "removed", "seg_keys"):
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
        """Replace changed rows, drop vanished ones and record ``meta``, in one transaction
        (:class:`RowWriter`, all at once)."""
        writer = RowWriter(self)
        try:
            writer.add(upserts)
            writer.finish(deletions, meta)
        finally:
            writer.abort()

    def defer_checkpoints(self) -> bool:
        """Let this connection's commits leave the WAL to :meth:`checkpoint`, to be run beside
        other work: copying a cold build's WAL into the database and syncing both took 0.33 s
        after the commit of 35,000 memories (0.06 s without). Whether there is a WAL to defer."""
        if self.db is None or not self.persistent:
            return False
        self.db.execute("PRAGMA wal_autocheckpoint=0")
        return True

    def checkpoint(self) -> None:
        """Copy the committed WAL into the database, on a connection of its own: another thread
        can run it while this one reads the index. Speed alone is at stake (the last connection
        to close checkpoints anyway), so a failure is ignored."""
        if self.path is None:
            return
        try:  # read-write, never created: a cache removed meanwhile stays removed
            db = sqlite3.connect(
                f"{self.path.as_uri()}?mode=rw", uri=True, timeout=10, isolation_level=None
            )
            try:
                db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                db.close()
        except sqlite3.Error:
            pass

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        assert self.db is not None
        return self.db.execute(sql, params).fetchall()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


class RowWriter:
    """One refresh's changes to an index, written in one transaction: rows can be handed over
    (:meth:`add`, :meth:`flush`) while later ones are still being built, so the inserts of a
    cold build overlap the building instead of following it; nothing is visible to others, nor
    kept by a killed process, before :meth:`finish` commits.

    A changed row is deleted and inserted again (never updated in place) so it gets a new
    docid: the ranking segment tells its own rows from newer ones by that number. A write that
    fails is rolled back at once and its error raised by :meth:`finish`.

    Into an index that held no row (a cold build) the ranking segment is gathered as the rows
    are written and written with them, as ``ranking.build_segment`` would build it from them
    afterwards: the work overlaps the workers' instead of following the last row.
    """

    def __init__(self, index: ScopeIndex) -> None:
        assert index.db is not None
        self.index = index
        self.db = index.db
        self.pending: list[tuple[Any, ...]] = []
        self.next_docid = 0  # 0: no transaction yet
        self.cold = False  # the index held no row when the transaction began: nothing to delete
        self.terms: list[tuple[int, Any]] = []  # (docid, body terms) of the valid rows written
        self.segment: SegmentBuilder | None = None  # a cold build's, of the rows written
        self.error: BaseException | None = None

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self.pending.extend(rows)

    def flush(self, minimum: int = 1) -> bool:
        """Write the pending rows if there are at least ``minimum``; whether any were written."""
        rows = self.pending
        if self.error is not None or not rows or len(rows) < minimum:
            return False
        self.pending = []
        try:
            self._begin()
            self._insert(rows)
        except BaseException as exc:
            self.error = exc  # never committed: the rows taken are lost with the transaction
            self.abort()
            if not isinstance(exc, sqlite3.Error):
                raise
        return True

    def _begin(self) -> None:
        if self.next_docid:
            return
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            self.cold = not db.execute("SELECT EXISTS(SELECT 1 FROM docs)").fetchone()[0]
            # Under the write lock the next docids are known: number the rows here and insert
            # them in batches (AUTOINCREMENT then carries on from the highest).
            (last,) = db.execute(
                "SELECT max(ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'docs'), 0),"
                " ifnull((SELECT max(docid) FROM docs), 0))"
            ).fetchone()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.next_docid = last + 1
        if self.cold and self.index.persistent:  # an index in memory is scored in SQL alone
            from ecc.vault.segment import SegmentBuilder

            self.segment = SegmentBuilder()

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        db = self.db
        if not self.cold:
            db.executemany("DELETE FROM docs WHERE rel = ?", [(row[0],) for row in rows])
        docids = range(self.next_docid, self.next_docid + len(rows))
        marks = ",".join("?" for _ in DOC_COLUMNS)
        db.executemany(
            f"INSERT INTO docs(docid,{','.join(DOC_COLUMNS)}) VALUES(?,{marks})",
            [(docid, *row[:_PACKED_AT]) for docid, row in zip(docids, rows, strict=True)],
        )
        valid = [(docid, row) for docid, row in zip(docids, rows, strict=True) if row[3] is None]
        db.executemany(  # valid documents only: bodies are never shown otherwise
            "INSERT INTO packed VALUES(?, ?)", [(docid, row[_PACKED_AT]) for docid, row in valid]
        )
        self.next_docid += len(rows)
        segment = self.segment
        if segment is not None:
            from ecc.vault.segment import needs_build

            fields = _SEGMENT_FIELDS
            segment.add([(docid, *fields(row)) for docid, row in zip(docids, rows, strict=True)])
            if needs_build(0, segment.size):
                self.terms = []  # the segment will be written: nothing to keep for a later one
                return
        self.terms.extend((docid, row[_PACKED_AT + 1]) for docid, row in valid)

    def finish(self, deletions: Iterable[str], meta: dict[str, Any] | None = None) -> None:
        """Write what is pending, drop the rows of ``deletions``, record ``meta`` and commit."""
        removed = [(rel,) for rel in deletions]
        self.flush()
        if self.error is not None:
            raise self.error
        if not self.next_docid and not removed and not meta:
            return
        db = self.db
        self._begin()
        try:
            if removed and not self.cold:
                db.executemany("DELETE FROM docs WHERE rel = ?", removed)
            for key, value in (meta or {}).items():
                db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))
            segment = self.segment
            if segment is not None:
                from ecc.vault.segment import needs_build

                if needs_build(0, segment.size):
                    segment.write(db)
            db.execute("COMMIT")
        except BaseException:
            self.abort()
            raise
        self.next_docid = 0
        self.segment = None
        self.index.fresh_terms.update(self.terms)
        self.terms = []

    def abort(self) -> None:
        """Roll back what was written and not committed (nothing once finished)."""
        if self.next_docid:
            self.next_docid = 0
            self.terms = []
            self.segment = None
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # rolled back already (a failed statement can end the transaction)


class Checkpoints:
    """The WAL checkpoints a load's writes left (:meth:`ScopeIndex.defer_checkpoints`), run on
    a thread beside the load's later work (the next scope's build, the search) and waited for
    before its indexes close. A thread must not start while forked workers may still be
    started (``rowbuild``): :meth:`start` is called once they are, and :meth:`settle` before
    the next build."""

    def __init__(self) -> None:
        self.waiting: list[ScopeIndex] = []
        self.thread: Any = None  # threading.Thread, imported only when one starts

    def add(self, index: ScopeIndex) -> None:
        self.waiting.append(index)

    def start(self) -> None:
        """Start the waiting checkpoints on a thread (after the one running, if any)."""
        if not self.waiting:
            return
        import threading

        indexes, self.waiting = self.waiting, []
        previous = self.thread

        def run() -> None:
            if previous is not None:
                previous.join()
            for index in indexes:
                index.checkpoint()

        self.thread = threading.Thread(target=run, name="ecc-index-checkpoint", daemon=True)
        self.thread.start()

    def settle(self) -> None:
        """Wait for the running checkpoints (not the waiting ones), so a build can fork."""
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def finish(self) -> None:
        """Run every checkpoint left and wait for them all."""
        self.start()
        self.settle()
