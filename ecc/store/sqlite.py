"""The embedded session store: SQLite in WAL mode, by default at ``<state dir>/ecc.db``.

Each process opens its own connection with a busy timeout; the runner funnels its writes
through one writer thread (:mod:`ecc.sessions.capture`). Writers serialise on SQLite's write
lock, which every write transaction takes up front (``BEGIN IMMEDIATE``), so WAL readers never
deadlock. The schema version is ``PRAGMA user_version``. Open stores through
:func:`ecc.store.open.open_store`, which picks this dialect or PostgreSQL by URL.
"""

from __future__ import annotations

import os

# The driver itself, which ``sqlite3`` re-exports (the same connect, Row and exceptions): the
# package's ``dbapi2`` adds only the DB-API date constructors and the default date and datetime
# adapters (deprecated since Python 3.12), and imports datetime for them (~2 ms of every ecc
# hook). The store binds and reads text (:func:`ecc.store.models.now_iso`), never dates.
try:
    import _sqlite3 as sqlite3
except ImportError:  # an interpreter that ships the package without its driver split out
    import sqlite3  # type: ignore[no-redef]

from ecc.contract.errors import EccError
from ecc.runtime.paths import ensure_private_dir
from ecc.store.base import INSERT_OUTPUT, OUTPUT_VALUES, DaemonLock, Store, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

BUSY_TIMEOUT_SECS = 10.0
ROWS_PER_INSERT = 100  # output rows a statement: 500 parameters, under any SQLite's limit (999)
_INSERT_OUTPUT_ROWS = INSERT_OUTPUT + ", ".join([OUTPUT_VALUES] * ROWS_PER_INSERT)


class SqliteStore(Store):
    """One connection to a SQLite session database (created with mode 0600 when missing)."""

    dialect = "sqlite"
    _insertion_order = "rowid"
    # locked, busy, full disk, I/O error, cannot open: each may pass; a constraint never does
    transient_errors = (sqlite3.OperationalError, StoreError)

    def __init__(self, path: Path | str) -> None:
        path = os.fspath(path)  # text: ecc hook opens a store on every call without pathlib
        self.url = path
        try:
            ensure_private_dir(os.path.dirname(path) or os.curdir)
            if not os.path.exists(path):
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            self.conn = sqlite3.connect(
                path,
                timeout=BUSY_TIMEOUT_SECS,
                isolation_level=None,
                check_same_thread=False,
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the session store {path}: {exc}") from exc
        self.conn.row_factory = sqlite3.Row
        self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECS * 1000)}")
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self._migrate()

    @property
    def path(self) -> Path:  # type: ignore[override]  # the file, from its text (url)
        from pathlib import Path

        return Path(self.url)

    @property
    def label(self) -> str:
        return str(self.path)

    def reopen(self) -> SqliteStore:
        return SqliteStore(self.path)

    def transaction(self) -> _Transaction:
        """A write transaction (take the write lock up front so WAL readers never deadlock)."""
        return _Transaction(self.conn)

    def set_lock_wait(self, seconds: float) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {max(0, int(seconds * 1000))}")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params).fetchall()]

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def _insert_output(self, rows: Sequence[tuple[str, int, str, str, str]]) -> None:
        """Output rows :data:`ROWS_PER_INSERT` a statement, the rest one a statement. SQLite
        inserts them alike, in order, but the driver binds, steps and resets a statement once
        for a hundred rows instead of once a row: the runner's writer spent most of a flood's
        capture there (1,000,000 lines: 2.9-3.3 s against 3.9-5.1 s in-process)."""
        whole = len(rows) - len(rows) % ROWS_PER_INSERT
        if whole:
            self.conn.executemany(
                _INSERT_OUTPUT_ROWS,
                [
                    [value for row in rows[start : start + ROWS_PER_INSERT] for value in row]
                    for start in range(0, whole, ROWS_PER_INSERT)
                ],
            )
        if whole < len(rows):
            super()._insert_output(rows[whole:])

    def _serialise(self, name: str) -> None:
        """Nothing to take: the write lock ``BEGIN IMMEDIATE`` took serialises every writer."""

    def change_counter(self) -> int:
        """SQLite's ``data_version``: it does not change for this connection's own writes."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def daemon_lock(self) -> FileDaemonLock:
        """A file lock beside the database."""
        return FileDaemonLock(self.path.with_name(self.path.name + ".daemon.lock"))

    def _schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _locked_schema_version(self) -> int:
        return self._schema_version()

    def _set_schema_version(self, version: int) -> None:
        self.conn.execute(f"PRAGMA user_version = {int(version)}")

    def _before_migration(self) -> None:
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.conn.execute("PRAGMA journal_mode = WAL")


class _Transaction:
    """``BEGIN IMMEDIATE`` on entry; ``COMMIT`` on a clean exit, ``ROLLBACK`` when the block or
    the commit itself raises. A class, not ``contextlib.contextmanager``: ``ecc hook`` writes
    its row through it without importing contextlib."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                self._rollback()
                raise
        self._rollback()  # the exception propagates

    def _rollback(self) -> None:
        if self.conn.in_transaction:  # SQLite rolls back by itself on a full disk or I/O error
            self.conn.execute("ROLLBACK")


class FileDaemonLock(DaemonLock):
    """An exclusive, non-blocking ``flock`` released by the kernel when the holder dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise EccError(f"another ecc daemon is already running on this store (pid {holder})")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
