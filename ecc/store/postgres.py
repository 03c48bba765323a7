"""The session store on PostgreSQL (psycopg 3): the shared state of a worker pool.

Selected by ``store.url = "postgresql://…"`` (psycopg comes with the ``celery`` extra,
``ecc-control-plane[celery]``, or ``pip install 'psycopg[binary]'``). Only plumbing differs from
SQLite: ``?`` becomes ``%s``,
migration column types are widened (``BIGSERIAL`` ids, ``BIGINT``, ``DOUBLE PRECISION``), the
schema version lives in the table ``ecc_schema``, ``claim_slot`` and migrations are serialised
by transaction-scoped advisory locks, and the daemon lock is a session-scoped advisory lock.
Locks are keyed by the schema so that several ecc stores can share one database in different
schemas. Nothing on a SQLite path imports this module.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.store.base import OUTPUT_COLUMNS, DaemonLock, Store, StoreError, redact

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence


class PostgresStore(Store):
    """One connection (autocommit outside :meth:`transaction`) to a PostgreSQL store."""

    dialect = "postgresql"
    _insertion_order = "id"

    def __init__(self, url: str) -> None:
        self.url = url
        # Files that belong beside the store on this machine (budget state, daemon log).
        from ecc.runtime import paths

        digest = paths.sha256_hex(url)[:12]
        self.path = paths.state_dir() / f"postgres-{digest}.db"
        self.conn = connect(url)
        self._sql_cache: dict[tuple[str, bool], str] = {}
        self._migrate()

    @property
    def label(self) -> str:
        return redact(self.url)

    def reopen(self) -> PostgresStore:
        return PostgresStore(self.url)

    @property
    def transient_errors(self) -> tuple[type[BaseException], ...]:  # type: ignore[override]
        """A lost connection, a lock timeout, a full disk on the server (psycopg's
        OperationalError, which statements re-raise as StoreError)."""
        import psycopg

        return (StoreError, psycopg.OperationalError)

    def set_lock_wait(self, seconds: float) -> None:
        self._execute(f"SET lock_timeout = {max(1, int(seconds * 1000))}", ())  # 0: forever

    def _sql(self, sql: str, has_params: bool) -> str:
        key = (sql, has_params)
        cached = self._sql_cache.get(key)
        if cached is None:
            cached = to_pyformat(sql) if has_params else sql
            self._sql_cache[key] = cached
        return cached

    def _execute(self, sql: str, params: Sequence[Any]) -> Any:
        import psycopg

        try:
            if params:
                return self.conn.execute(self._sql(sql, True), list(params))
            return self.conn.execute(self._sql(sql, False))
        except psycopg.OperationalError as exc:
            raise StoreError(f"the session store {self.label} failed: {exc}") from exc

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return list(self._execute(sql, params).fetchall())

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        row = self._execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self._execute(sql, params).rowcount)

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(self._sql(sql, True), [list(row) for row in rows])

    def _insert_output(self, rows: Sequence[tuple[str, int, str, str, str]]) -> None:
        """``COPY``: about three times the rows a second of batched ``INSERT``s, which keeps
        the runner's output backlog (and so a stop under a flood) short."""
        import psycopg

        try:
            with self.conn.cursor() as cursor:
                columns = ", ".join(OUTPUT_COLUMNS)
                with cursor.copy(f"COPY output ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        except psycopg.OperationalError as exc:
            raise StoreError(f"the session store {self.label} failed: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def _serialise(self, name: str) -> None:
        self._execute(
            "SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext(?))", (name,)
        )

    def change_counter(self) -> int:
        """The next transaction id of the cluster: it moves whenever anyone writes."""
        row = self._one("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x")
        return int(row["x"]) if row else 0

    def daemon_lock(self) -> AdvisoryDaemonLock:
        return AdvisoryDaemonLock(self.url)

    def _schema_version(self) -> int | None:
        exists = self._one("SELECT to_regclass('ecc_schema') IS NOT NULL AS e")
        if not exists or not exists["e"]:
            return None
        row = self._one("SELECT MAX(version) AS v FROM ecc_schema")
        return int(row["v"]) if row and row["v"] is not None else None

    def _locked_schema_version(self) -> int:
        self._exec("CREATE TABLE IF NOT EXISTS ecc_schema (version INTEGER NOT NULL)")
        row = self._one("SELECT MAX(version) AS v FROM ecc_schema")
        return int(row["v"]) if row and row["v"] is not None else 0

    def _set_schema_version(self, version: int) -> None:
        self._exec("DELETE FROM ecc_schema")
        self._exec("INSERT INTO ecc_schema (version) VALUES (?)", (version,))

    def _ddl(self, statement: str) -> str:
        statement = statement.replace("id INTEGER PRIMARY KEY", "id BIGSERIAL PRIMARY KEY")
        statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
        return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


class AdvisoryDaemonLock(DaemonLock):
    """A session-scoped advisory lock on its own connection, released when the holder dies."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = Path(redact(url))
        self.conn: Any = None

    def acquire(self) -> None:
        conn = connect(self.url)
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtext(current_schema()), hashtext('daemon')) AS ok"
        ).fetchone()
        if not row or not row["ok"]:
            holder = conn.execute(
                "SELECT a.application_name AS name FROM pg_locks l "
                "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
                "AND l.granted AND l.classid = hashtext(current_schema())::oid "
                "AND l.objid = hashtext('daemon')::oid AND l.objsubid = 2"
            ).fetchone()
            conn.close()
            name = (holder or {}).get("name") or ""
            pid = name.removeprefix("ecc-daemon pid ") if name.startswith("ecc-daemon") else "?"
            raise EccError(f"another ecc daemon is already running on this store (pid {pid})")
        conn.execute(f"SET application_name = 'ecc-daemon pid {os.getpid()}'")
        self.conn = conn

    def release(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def connect(url: str) -> Any:
    """A psycopg connection in autocommit mode whose rows are plain dicts."""
    try:
        import psycopg
    except ImportError:
        from ecc.runtime.extras import extra_hint

        raise StoreError(extra_hint("celery", "store.url = postgresql://…")) from None
    try:
        return psycopg.connect(url, autocommit=True, row_factory=_row_factory, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(f"cannot open the session store {redact(url)}: {exc}") from exc


def _row_factory(cursor: Any) -> Any:
    from decimal import Decimal  # psycopg has imported it already

    names = [column.name for column in cursor.description or ()]

    def plain(value: Any) -> Any:
        """PostgreSQL sums integers as NUMERIC: hand callers the int (or float) SQLite would."""
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
        return value

    def make(values: Sequence[Any]) -> dict[str, Any]:
        return {name: plain(value) for name, value in zip(names, values, strict=True)}

    return make


def to_pyformat(sql: str) -> str:
    """``?`` placeholders to ``%s`` (and a literal ``%`` to ``%%``), outside quoted text."""
    out: list[str] = []
    quoted = False
    for char in sql:
        if char == "'":
            quoted = not quoted
            out.append(char)
        elif char == "%":
            out.append("%%")
        elif char == "?" and not quoted:
            out.append("%s")
        else:
            out.append(char)
    return "".join(out)
