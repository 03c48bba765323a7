"""The session store: every read and write of session state goes through this module.

Embedded default: SQLite in WAL mode at ``<state dir>/ecc.db`` (``[store] url`` moves it;
``sqlite:///path`` or a plain path). ``store.url = "postgresql://…"`` selects PostgreSQL
(psycopg 3, installed with ``ecc[celery]`` or ``pip install 'psycopg[binary]'``): the shared store
of a worker pool. Each process opens its own connection (SQLite with a busy timeout); the runner
funnels its writes through one writer thread (``ecc.sessions.runner``).

One schema, one migration history and the same queries serve both. The dialect layer is thin and
lives here only (:class:`PostgresStore`): placeholders, column types in migrations, the schema
version, serialising locks (advisory locks) and the change counter.

Portability rules:

* queries use plain SQL that SQLite and PostgreSQL share (``?`` placeholders, translated to
  ``%s`` for psycopg; ``ON CONFLICT``, ``RETURNING`` and sub-selects only);
* timestamps are ISO-8601 UTC text with milliseconds and ``Z`` (they sort as text);
* atomic claims are single conditional ``UPDATE`` statements checked by row count — never a
  read-then-write in the caller; the one place that needs a serialising lock
  (:meth:`Store.claim_slot`) hides it behind the method;
* SQLite-only statements (``PRAGMA``, ``BEGIN IMMEDIATE``) live in :class:`Store` internals only.

Schema changes are ordered migrations numbered by ``PRAGMA user_version`` (PostgreSQL: the table
``ecc_schema``); opening a current database performs no writes.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.store.models import (
    ACTIVE,
    TERMINAL,
    InvalidTransition,
    Session,
    State,
    check_transition,
    now_iso,
)

if TYPE_CHECKING:
    from ecc.runtime.config.model import Config

BUSY_TIMEOUT_SECS = 10.0

# Each entry upgrades the schema by one version. Never edit a released entry: append a new one.
MIGRATIONS: list[list[str]] = [
    [  # 1: sessions, output, events, worktree queue, tool calls, notifications
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL DEFAULT '',
            task TEXT NOT NULL,
            harness TEXT NOT NULL,
            profile_name TEXT,
            profile_json TEXT,
            executor TEXT NOT NULL DEFAULT 'local',
            state TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            project_dir TEXT NOT NULL,
            repo_root TEXT,
            working_dir TEXT NOT NULL,
            use_worktree INTEGER NOT NULL DEFAULT 0,
            worktree_path TEXT,
            worktree_branch TEXT,
            base_branch TEXT,
            base_commit TEXT,
            slot INTEGER NOT NULL DEFAULT 0,
            runner_pid INTEGER,
            runner_host TEXT,
            runner_token TEXT,
            harness_pid INTEGER,
            harness_pgid INTEGER,
            harness_token TEXT,
            exit_code INTEGER,
            exit_signal INTEGER,
            stop_requested INTEGER NOT NULL DEFAULT 0,
            stop_grace REAL,
            attempts INTEGER NOT NULL DEFAULT 0,
            run_kind TEXT NOT NULL DEFAULT 'start',
            harness_session_id TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            started_at TEXT,
            ended_at TEXT,
            heartbeat_at TEXT
        )
        """,
        "CREATE INDEX sessions_state ON sessions (state)",
        "CREATE INDEX sessions_created ON sessions (created_at)",
        """
        CREATE TABLE output (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            stream TEXT NOT NULL,
            ts TEXT NOT NULL,
            line TEXT NOT NULL,
            UNIQUE (session_id, seq)
        )
        """,
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            from_state TEXT,
            to_state TEXT,
            reason TEXT NOT NULL DEFAULT '',
            data_json TEXT,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX events_session ON events (session_id, id)",
        """
        CREATE TABLE worktree_queue (
            session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            repo_root TEXT,
            requested_at TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE tool_calls (
            id INTEGER PRIMARY KEY,
            session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
            harness TEXT NOT NULL DEFAULT '',
            tool TEXT NOT NULL,
            input_json TEXT NOT NULL,
            score REAL,
            action TEXT,
            reasons_json TEXT NOT NULL DEFAULT '[]',
            decision TEXT,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX tool_calls_session ON tool_calls (session_id, id)",
        """
        CREATE TABLE notifications (
            id INTEGER PRIMARY KEY,
            event TEXT NOT NULL,
            session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
            title TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL DEFAULT '',
            data_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )
        """,
    ],
    [  # 2: distributed sessions name their repository by remote URL (issue 11)
        "ALTER TABLE sessions ADD COLUMN repo_url TEXT",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

_SESSION_COLUMNS = frozenset(
    {
        "name",
        "task",
        "harness",
        "profile_name",
        "profile_json",
        "executor",
        "project_dir",
        "repo_root",
        "repo_url",
        "working_dir",
        "use_worktree",
        "worktree_path",
        "worktree_branch",
        "base_branch",
        "base_commit",
        "slot",
        "runner_pid",
        "runner_host",
        "runner_token",
        "harness_pid",
        "harness_pgid",
        "harness_token",
        "exit_code",
        "exit_signal",
        "stop_requested",
        "stop_grace",
        "attempts",
        "run_kind",
        "harness_session_id",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "started_at",
        "ended_at",
        "heartbeat_at",
        "reason",
    }
)


class StoreError(EccError):
    """The store could not be opened or is from a newer ecc."""


class IdCollision(EccError):
    """A new session id already exists (the caller retries with another)."""


def default_path() -> Path:
    from ecc.runtime import paths

    return paths.state_dir() / "ecc.db"


def is_postgres_url(url: object) -> bool:
    return isinstance(url, str) and url.startswith(("postgresql://", "postgres://"))


def resolve_url(url: str | None) -> Path | str:
    """Map ``[store] url`` to a SQLite path or a PostgreSQL URL; refuse anything else."""
    if not url:
        return default_path()
    if is_postgres_url(url):
        return url
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite://") :]).expanduser()
    if "://" in url:
        raise StoreError(
            f"unsupported store url {redact(url)!r} (use sqlite:///PATH, a file path or "
            "postgresql://…)"
        )
    return Path(url).expanduser()


def redact(url: str) -> str:
    """A store URL fit for messages and logs: any password is replaced by ``***``."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def open_store(url: str | None = None, *, config: Config | None = None) -> Store:
    """Open (creating and migrating when needed) the store named by ``url`` or by config."""
    if url is None:
        if config is None:
            from ecc.runtime.config.model import get_config

            config = get_config()
        url = config.store.url
    return Store(resolve_url(url))


class Store:
    """One connection to the session database. Not shared between threads.

    ``Store(path)`` opens SQLite; ``Store("postgresql://…")`` returns a :class:`PostgresStore`.
    """

    dialect = "sqlite"
    _insertion_order = "rowid"

    def __new__(cls, target: Path | str) -> Store:
        if cls is Store and is_postgres_url(target):
            return super().__new__(PostgresStore)
        return super().__new__(cls)

    def __init__(self, target: Path | str) -> None:
        path = Path(target)
        self.path = path
        self.url = str(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not path.exists():
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
            self.conn = sqlite3.connect(
                str(path),
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

    # -- plumbing ------------------------------------------------------------------------

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the session store {self.path} has schema version {version}, newer than this "
                f"ecc understands ({SCHEMA_VERSION}); upgrade ecc"
            )
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]  # re-read: racing
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {number + 1}")
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def reopen(self) -> Store:
        """A new connection to the same store (for another thread)."""
        return Store(self.path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction (take the write lock up front so WAL readers never deadlock)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params).fetchall()]

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def _serialise(self, name: str) -> None:
        """Inside a transaction: hold the lock ``name`` until it ends (SQLite: the write lock
        ``BEGIN IMMEDIATE`` took already serialises every writer)."""

    # -- sessions --------------------------------------------------------------------------

    def insert_session(
        self, session_id: str, *, task: str, harness: str, state: State, reason: str, **fields: Any
    ) -> Session:
        """Insert a new session and its creation event; :class:`IdCollision` if the id exists."""
        unknown = set(fields) - _SESSION_COLUMNS
        if unknown:
            raise ValueError(f"unknown session columns: {sorted(unknown)}")
        now = now_iso()
        columns = ["id", "task", "harness", "state", "reason", "created_at", "updated_at"]
        values: list[Any] = [session_id, task, harness, state.value, reason, now, now]
        for key, value in fields.items():
            columns.append(key)
            values.append(value)
        marks = ", ".join("?" for _ in columns)
        with self.transaction():
            inserted = self._exec(
                f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({marks}) "
                "ON CONFLICT (id) DO NOTHING",
                values,
            )
            if inserted != 1:
                raise IdCollision(f"session id {session_id} already exists")
            self._event(session_id, "transition", None, state.value, reason, None, now)
        session = self.get_session(session_id)
        assert session is not None
        return session

    def get_session(self, session_id: str) -> Session | None:
        row = self._one("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return Session.from_row(row) if row else None

    def ids_with_prefix(self, prefix: str, limit: int = 20) -> list[dict[str, Any]]:
        """Sessions whose id starts with ``prefix`` (id, state, task, created_at), newest first."""
        escaped = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        return self._rows(
            "SELECT id, state, task, created_at FROM sessions WHERE id LIKE ? ESCAPE '!' "
            "ORDER BY created_at DESC, id LIMIT ?",
            (escaped + "%", limit),
        )

    def latest_session(self) -> Session | None:
        """The most recently created session (``latest`` on the command line)."""
        order = self._insertion_order
        row = self._one(f"SELECT * FROM sessions ORDER BY created_at DESC, {order} DESC LIMIT 1")
        return Session.from_row(row) if row else None

    def list_sessions(
        self, states: Iterable[State] | None = None, limit: int | None = None
    ) -> list[Session]:
        sql = "SELECT * FROM sessions"
        params: list[Any] = []
        wanted = [State(s).value for s in states] if states is not None else None
        if wanted is not None:
            if not wanted:
                return []
            sql += f" WHERE state IN ({', '.join('?' for _ in wanted)})"
            params.extend(wanted)
        sql += " ORDER BY created_at DESC, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Session.from_row(row) for row in self._rows(sql, params)]

    def sessions_updated_since(self, since: str) -> list[Session]:
        """Sessions whose ``updated_at`` is at or after ``since`` (a watcher's watermark)."""
        rows = self._rows("SELECT * FROM sessions WHERE updated_at >= ?", (since,))
        return [Session.from_row(row) for row in rows]

    def change_counter(self) -> int:
        """A number that changes whenever another connection commits (a cheap poll for watchers;
        SQLite ``data_version``). It does not change for this connection's own writes."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def update_session(self, session_id: str, **fields: Any) -> bool:
        """Set non-state columns; state changes must use :meth:`transition`."""
        if not fields:
            return False
        unknown = set(fields) - _SESSION_COLUMNS
        if unknown:
            raise ValueError(f"not updatable here: {sorted(unknown)}")
        assigns = ", ".join(f"{key} = ?" for key in fields)
        params = [*fields.values(), now_iso(), session_id]
        return (
            self._exec(f"UPDATE sessions SET {assigns}, updated_at = ? WHERE id = ?", params) == 1
        )

    def transition(
        self,
        session_id: str,
        to: State,
        reason: str,
        *,
        expect: Iterable[State] | None = None,
        data: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Session | None:
        """Move a session to ``to`` (checked by the one table) and record why.

        A compare-and-set on the current state, so concurrent writers cannot skip the table.
        ``expect`` limits the source states; returns the updated session, or None when the session
        is already in ``to`` (no event). Raises :class:`InvalidTransition` when not allowed.
        """
        unknown = set(fields) - _SESSION_COLUMNS
        if unknown:
            raise ValueError(f"unknown session columns: {sorted(unknown)}")
        allowed = {State(s) for s in expect} if expect is not None else None
        for _ in range(50):
            current = self.get_session(session_id)
            if current is None:
                raise EccError(f"no session {session_id}")
            if current.state == to:
                return None
            if allowed is not None and current.state not in allowed:
                raise InvalidTransition(
                    f"session {session_id} is {current.state.value}, not "
                    + " or ".join(sorted(s.value for s in allowed))
                )
            check_transition(current.state, to)
            now = now_iso()
            values = dict(fields)
            values["reason"] = reason
            if to in TERMINAL:
                values.setdefault("ended_at", now)
                values["slot"] = 0
                values.setdefault("runner_pid", None)
            if to == State.RUNNING and current.state != State.STALE:
                values.setdefault("started_at", now)
            assigns = ", ".join(f"{key} = ?" for key in values)
            with self.transaction():
                changed = self._exec(
                    f"UPDATE sessions SET state = ?, {assigns}, updated_at = ? "
                    "WHERE id = ? AND state = ?",
                    [to.value, *values.values(), now, session_id, current.state.value],
                )
                if changed != 1:
                    continue  # someone else moved it first: re-read and re-check
                if current.state == State.QUEUED:
                    self._exec("DELETE FROM worktree_queue WHERE session_id = ?", (session_id,))
                self._event(
                    session_id, "transition", current.state.value, to.value, reason, data, now
                )
            return self.get_session(session_id)
        raise EccError(f"session {session_id} keeps changing state; try again")

    def delete_session(self, session_id: str) -> None:
        """Forget a finished session and everything recorded about it (tool calls are kept)."""
        with self.transaction():
            row = self._one("SELECT state FROM sessions WHERE id = ?", (session_id,))
            if row is None:
                raise EccError(f"no session {session_id}")
            if State(row["state"]) in ACTIVE:
                raise EccError(f"session {session_id} is {row['state']}; stop it first")
            for table in ("output", "events", "worktree_queue"):
                self._exec(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self._exec(
                "UPDATE tool_calls SET session_id = NULL WHERE session_id = ?", (session_id,)
            )
            self._exec(
                "UPDATE notifications SET session_id = NULL WHERE session_id = ?", (session_id,)
            )
            self._exec("DELETE FROM sessions WHERE id = ?", (session_id,))

    # -- runner and slot claims ------------------------------------------------------------

    def claim_runner(self, session_id: str, pid: int, host: str, token: str | None) -> bool:
        """At most once: only one runner may own a pending/queued session at a time."""
        return (
            self._exec(
                "UPDATE sessions SET runner_pid = ?, runner_host = ?, runner_token = ?, "
                "attempts = attempts + 1, heartbeat_at = ?, updated_at = ? "
                "WHERE id = ? AND runner_pid IS NULL AND state IN ('pending', 'queued') "
                "AND stop_requested = 0",
                (pid, host, token, now_iso(), now_iso(), session_id),
            )
            == 1
        )

    def release_runner(self, session_id: str, pid: int) -> bool:
        return (
            self._exec(
                "UPDATE sessions SET runner_pid = NULL, runner_token = NULL, updated_at = ? "
                "WHERE id = ? AND runner_pid = ?",
                (now_iso(), session_id, pid),
            )
            == 1
        )

    def claim_slot(self, session_id: str, worktree_limit: int, session_limit: int) -> bool:
        """Take one of the parallel slots for ``session_id`` if both limits allow it.

        A session that uses a worktree counts against ``worktree_limit`` too. Serialised by the
        write lock (SQLite); a PostgreSQL store does the same under an advisory lock.
        """
        with self.transaction():
            self._serialise("slots")
            changed = self._exec(
                "UPDATE sessions SET slot = 1, updated_at = ? WHERE id = ? AND slot = 0 "
                "AND state IN ('pending', 'queued') "
                "AND (SELECT COUNT(*) FROM sessions WHERE slot = 1) < ? "
                "AND (use_worktree = 0 OR "
                "(SELECT COUNT(*) FROM sessions WHERE slot = 1 AND use_worktree = 1) < ?)",
                (now_iso(), session_id, session_limit, worktree_limit),
            )
        return changed == 1

    def slot_free(self, use_worktree: bool, worktree_limit: int, session_limit: int) -> bool:
        row = self._one(
            "SELECT COUNT(*) AS total, "
            "COALESCE(SUM(CASE WHEN use_worktree = 1 THEN 1 ELSE 0 END), 0) AS worktrees "
            "FROM sessions WHERE slot = 1"
        )
        assert row is not None
        if row["total"] >= session_limit:
            return False
        return not (use_worktree and row["worktrees"] >= worktree_limit)

    def release_slot(self, session_id: str) -> None:
        self._exec("UPDATE sessions SET slot = 0 WHERE id = ?", (session_id,))

    def slots_in_use(self) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM sessions WHERE slot = 1")
        return int(row["n"]) if row else 0

    def enqueue(self, session_id: str, repo_root: str | None) -> None:
        self._exec(
            "INSERT INTO worktree_queue (session_id, repo_root, requested_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO NOTHING",
            (session_id, repo_root, now_iso()),
        )

    def queued_sessions(self) -> list[Session]:
        """Queued sessions, first come first served."""
        rows = self._rows(
            "SELECT s.* FROM sessions s LEFT JOIN worktree_queue q ON q.session_id = s.id "
            "WHERE s.state = 'queued' ORDER BY COALESCE(q.requested_at, s.created_at), s.id"
        )
        return [Session.from_row(row) for row in rows]

    def fail_if_silent(self, session_id: str, heartbeat_seen: str | None, reason: str) -> bool:
        """The lease reaper's one write: fail a running (or claimed) session only if its
        heartbeat is still the one the reaper judged, so a beat that lands meanwhile wins.

        Never re-queues anything: a re-run is always a new, explicit request.
        """
        now = now_iso()
        with self.transaction():
            row = self._one("SELECT state FROM sessions WHERE id = ?", (session_id,))
            if row is None or State(row["state"]) in TERMINAL:
                return False
            check_transition(row["state"], State.FAILED)
            changed = self._exec(
                "UPDATE sessions SET state = 'failed', reason = ?, ended_at = ?, slot = 0, "
                "harness_pid = NULL, updated_at = ? WHERE id = ? AND state = ? "
                "AND COALESCE(heartbeat_at, '') = ?",
                (reason, now, now, session_id, row["state"], heartbeat_seen or ""),
            )
            if changed != 1:
                return False
            self._exec("DELETE FROM worktree_queue WHERE session_id = ?", (session_id,))
            self._event(session_id, "transition", row["state"], "failed", reason, None, now)
        return True

    def heartbeat(self, session_id: str) -> None:
        now = now_iso()
        self._exec("UPDATE sessions SET heartbeat_at = ? WHERE id = ?", (now, session_id))

    def request_stop(self, session_id: str, grace: float) -> None:
        self._exec(
            "UPDATE sessions SET stop_requested = 1, stop_grace = ?, updated_at = ? WHERE id = ?",
            (grace, now_iso(), session_id),
        )

    # -- output ----------------------------------------------------------------------------

    def append_output(self, session_id: str, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Insert captured lines ``(seq, stream, ts, line)`` in one transaction."""
        if not rows:
            return
        with self.transaction():
            self._executemany(
                "INSERT INTO output (session_id, seq, stream, ts, line) VALUES (?, ?, ?, ?, ?)",
                [(session_id, *row) for row in rows],
            )

    def max_seq(self, session_id: str) -> int:
        row = self._one("SELECT MAX(seq) AS m FROM output WHERE session_id = ?", (session_id,))
        return int(row["m"]) if row and row["m"] is not None else 0

    def read_output(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        stream: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Lines with ``seq > after_seq`` in order: dicts with seq, stream, ts, line."""
        sql = "SELECT seq, stream, ts, line FROM output WHERE session_id = ? AND seq > ?"
        params: list[Any] = [session_id, after_seq]
        if stream:
            sql += " AND stream = ?"
            params.append(stream)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._rows(sql, params)

    def tail_output(
        self, session_id: str, count: int, stream: str | None = None
    ) -> list[dict[str, Any]]:
        sql = "SELECT seq, stream, ts, line FROM output WHERE session_id = ?"
        params: list[Any] = [session_id]
        if stream:
            sql += " AND stream = ?"
            params.append(stream)
        sql += " ORDER BY seq DESC LIMIT ?"
        params.append(count)
        return list(reversed(self._rows(sql, params)))

    def count_output(self, session_id: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM output WHERE session_id = ?", (session_id,))
        return int(row["n"]) if row else 0

    # -- events ----------------------------------------------------------------------------

    def _event(
        self,
        session_id: str,
        kind: str,
        from_state: str | None,
        to_state: str | None,
        reason: str,
        data: dict[str, Any] | None,
        now: str,
    ) -> None:
        self._exec(
            "INSERT INTO events (session_id, kind, from_state, to_state, reason, data_json, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                kind,
                from_state,
                to_state,
                reason,
                json.dumps(data, default=str) if data else None,
                now,
            ),
        )

    def add_event(
        self, session_id: str, kind: str, reason: str, data: dict[str, Any] | None = None
    ) -> None:
        """Record something that happened to a session without changing its state."""
        self._event(session_id, kind, None, None, reason, data, now_iso())

    def list_events(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT kind, from_state, to_state, reason, data_json, created_at FROM events "
            "WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        for row in rows:
            raw = row.pop("data_json")
            row["data"] = json.loads(raw) if raw else None
        return rows

    # -- usage, tool calls and notifications (used by risk, hooks, notify and budgets) -----

    def add_usage(
        self, session_id: str, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0
    ) -> bool:
        """Add (never overwrite) token and cost use to a session's running totals."""
        return (
            self._exec(
                "UPDATE sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, updated_at = ? "
                "WHERE id = ?",
                (int(input_tokens), int(output_tokens), float(cost_usd), now_iso(), session_id),
            )
            == 1
        )

    def usage_totals(self, since: str | None = None) -> dict[str, Any]:
        """Summed tokens and cost over sessions created at or after ``since`` (ISO), or all."""
        sql = (
            "SELECT COUNT(*) AS sessions, COALESCE(SUM(input_tokens), 0) AS input_tokens, "
            "COALESCE(SUM(output_tokens), 0) AS output_tokens, "
            "COALESCE(SUM(cost_usd), 0) AS cost_usd FROM sessions"
        )
        params: tuple[Any, ...] = ()
        if since:
            sql += " WHERE created_at >= ?"
            params = (since,)
        row = self._one(sql, params)
        assert row is not None
        return row

    def record_tool_call(
        self,
        *,
        session_id: str | None,
        harness: str,
        tool: str,
        input: Any,
        score: float | None = None,
        action: str | None = None,
        reasons: Sequence[str] = (),
        decision: str | None = None,
    ) -> int:
        """Record one scored tool call; an unknown ``session_id`` is stored as unattached."""
        if (
            session_id is not None
            and self._one("SELECT id FROM sessions WHERE id = ?", (session_id,)) is None
        ):
            session_id = None
        input_json = json.dumps(input, sort_keys=True, default=str)  # a str stays a JSON string
        row = self._one(
            "INSERT INTO tool_calls (session_id, harness, tool, input_json, score, action, "
            "reasons_json, decision, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                session_id,
                harness,
                tool,
                input_json,
                score,
                action,
                json.dumps(list(reasons)),
                decision,
                now_iso(),
            ),
        )
        assert row is not None
        return int(row["id"])

    def list_tool_calls(
        self, session_id: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Tool calls of one session (or all, when None), oldest first."""
        sql = "SELECT * FROM tool_calls"
        params: list[Any] = []
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params.append(session_id)
        sql += " ORDER BY id"
        if limit is not None:
            sql = f"SELECT * FROM ({sql} DESC LIMIT ?) AS recent ORDER BY id"
            params.append(limit)
        rows = self._rows(sql, params)
        for row in rows:
            row["reasons"] = json.loads(row.pop("reasons_json") or "[]")
        return rows

    def tool_call_summary(self) -> dict[str, dict[str, Any]]:
        """Per session: number of tool calls, highest score, denied and asked counts, last id."""
        rows = self._rows(
            "SELECT session_id, COUNT(*) AS calls, MAX(score) AS max_score, "
            "COALESCE(SUM(CASE WHEN decision = 'deny' THEN 1 ELSE 0 END), 0) AS denied, "
            "COALESCE(SUM(CASE WHEN decision = 'ask' THEN 1 ELSE 0 END), 0) AS asked, "
            "MAX(id) AS last_id FROM tool_calls WHERE session_id IS NOT NULL GROUP BY session_id"
        )
        return {row.pop("session_id"): row for row in rows}

    def record_notification(
        self,
        *,
        event: str,
        session_id: str | None,
        title: str,
        body: str,
        data: dict[str, Any] | None = None,
    ) -> int:
        if (
            session_id is not None
            and self._one("SELECT id FROM sessions WHERE id = ?", (session_id,)) is None
        ):
            session_id = None
        row = self._one(
            "INSERT INTO notifications (event, session_id, title, body, data_json, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (event, session_id, title, body, json.dumps(data or {}, default=str), now_iso()),
        )
        assert row is not None
        return int(row["id"])

    def list_notifications(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT * FROM (SELECT * FROM notifications ORDER BY id DESC LIMIT ?) AS recent "
            "ORDER BY id",
            (limit,),
        )
        for row in rows:
            row["data"] = json.loads(row.pop("data_json") or "{}")
        return rows

    # -- daemon exclusivity ----------------------------------------------------------------

    def daemon_lock(self) -> DaemonLock:
        """The lock that keeps a second daemon off this store (a file lock beside the db)."""
        return DaemonLock(self.path.with_name(self.path.name + ".daemon.lock"))


class DaemonLock:
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


class PostgresStore(Store):
    """The same store on PostgreSQL (psycopg 3): the shared state of a worker pool.

    Only plumbing differs from SQLite: ``?`` becomes ``%s``, migration column types are widened
    (``BIGSERIAL`` ids, ``BIGINT``, ``DOUBLE PRECISION``), the schema version lives in the table
    ``ecc_schema``, ``claim_slot`` and migrations are serialised by transaction-scoped advisory
    locks, and the daemon lock is a session-scoped advisory lock. Locks are keyed by the schema
    so that several ecc stores can share one database in different schemas.
    """

    dialect = "postgresql"
    _insertion_order = "id"

    def __init__(self, target: Path | str) -> None:
        url = str(target)
        self.url = url
        # Files that belong beside the store on this machine (budget state, daemon log).
        from ecc.runtime import paths

        digest = paths.sha256_hex(url)[:12]
        self.path = paths.state_dir() / f"postgres-{digest}.db"
        self.conn = _pg_connect(url)
        self._sql_cache: dict[tuple[str, bool], str] = {}
        self._migrate()

    def reopen(self) -> Store:
        return PostgresStore(self.url)

    def _sql(self, sql: str, has_params: bool) -> str:
        key = (sql, has_params)
        cached = self._sql_cache.get(key)
        if cached is None:
            cached = _to_pyformat(sql) if has_params else sql
            self._sql_cache[key] = cached
        return cached

    def _execute(self, sql: str, params: Sequence[Any]) -> Any:
        import psycopg

        try:
            if params:
                return self.conn.execute(self._sql(sql, True), list(params))
            return self.conn.execute(self._sql(sql, False))
        except psycopg.OperationalError as exc:
            raise StoreError(f"the session store {redact(self.url)} failed: {exc}") from exc

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

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def _serialise(self, name: str) -> None:
        self._execute(
            "SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext(?))", (name,)
        )

    def _migrate(self) -> None:
        version = self._schema_version()
        if version == SCHEMA_VERSION:
            return
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"the session store {redact(self.url)} has schema version {version}, newer than "
                f"this ecc understands ({SCHEMA_VERSION}); upgrade ecc"
            )
        with self.transaction():
            self._serialise("migrate")
            self._execute("CREATE TABLE IF NOT EXISTS ecc_schema (version INTEGER NOT NULL)", ())
            row = self._one("SELECT MAX(version) AS v FROM ecc_schema")
            version = int(row["v"]) if row and row["v"] is not None else 0  # re-read: racing
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    self._execute(_pg_ddl(statement), ())
                self._execute("DELETE FROM ecc_schema", ())
                self._execute("INSERT INTO ecc_schema (version) VALUES (?)", (number + 1,))

    def _schema_version(self) -> int | None:
        exists = self._one("SELECT to_regclass('ecc_schema') IS NOT NULL AS e")
        if not exists or not exists["e"]:
            return None
        row = self._one("SELECT MAX(version) AS v FROM ecc_schema")
        return int(row["v"]) if row and row["v"] is not None else None

    def change_counter(self) -> int:
        """The next transaction id of the cluster: it moves whenever anyone writes."""
        row = self._one("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x")
        return int(row["x"]) if row else 0

    def daemon_lock(self) -> DaemonLock:
        return PostgresDaemonLock(self.url)


class PostgresDaemonLock(DaemonLock):
    """A session-scoped advisory lock on its own connection, released when the holder dies."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = Path(redact(url))
        self.fd = None
        self.conn: Any = None

    def acquire(self) -> None:
        conn = _pg_connect(self.url)
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


def _pg_connect(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "store.url names PostgreSQL but psycopg is not installed "
            "(pip install 'psycopg[binary]', or install ecc[celery])"
        ) from None
    try:
        return psycopg.connect(
            url, autocommit=True, row_factory=_pg_row_factory, connect_timeout=10
        )
    except psycopg.Error as exc:
        raise StoreError(f"cannot open the session store {redact(url)}: {exc}") from exc


def _pg_row_factory(cursor: Any) -> Any:
    from decimal import Decimal  # PostgreSQL only (psycopg has imported it): not on SQLite paths

    names = [column.name for column in cursor.description or ()]

    def plain(value: Any) -> Any:
        """PostgreSQL sums integers as NUMERIC: hand callers the int (or float) SQLite would."""
        if isinstance(value, Decimal):
            return int(value) if value == value.to_integral_value() else float(value)
        return value

    def make(values: Sequence[Any]) -> dict[str, Any]:
        return {name: plain(value) for name, value in zip(names, values, strict=True)}

    return make


def _to_pyformat(sql: str) -> str:
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


def _pg_ddl(statement: str) -> str:
    """One migration statement in PostgreSQL's types (the schema itself is shared)."""
    statement = statement.replace("id INTEGER PRIMARY KEY", "id BIGSERIAL PRIMARY KEY")
    statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)


# -- module-level conveniences for other subsystems (each opens the configured store) --------


@contextmanager
def connect(store: Store | None = None) -> Iterator[Store]:
    """Use ``store`` if given, else open the configured one for the duration of the block."""
    if store is not None:
        yield store
        return
    opened = open_store()
    try:
        yield opened
    finally:
        opened.close()


def record_tool_call(
    session_id: str | None,
    harness: str,
    tool: str,
    input: Any,
    score: float | None = None,
    action: str | None = None,
    reasons: Sequence[str] = (),
    decision: str | None = None,
    *,
    store: Store | None = None,
) -> int:
    """Record one tool call (``session_id`` None or unknown = unattached); returns its id."""
    with connect(store) as db:
        return db.record_tool_call(
            session_id=session_id,
            harness=harness,
            tool=tool,
            input=input,
            score=score,
            action=action,
            reasons=reasons,
            decision=decision,
        )


def list_tool_calls(
    session_id: str | None = None, *, limit: int | None = None, store: Store | None = None
) -> list[dict[str, Any]]:
    with connect(store) as db:
        return db.list_tool_calls(session_id, limit)


def record_notification(
    event: str,
    session_id: str | None,
    title: str,
    body: str,
    data: dict[str, Any] | None = None,
    *,
    store: Store | None = None,
) -> int:
    with connect(store) as db:
        return db.record_notification(
            event=event, session_id=session_id, title=title, body=body, data=data
        )


def add_usage(
    session_id: str,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost_usd: float = 0.0,
    *,
    store: Store | None = None,
) -> bool:
    """Add usage to a session's totals; False when the session does not exist."""
    with connect(store) as db:
        return db.add_usage(session_id, input_tokens, output_tokens, cost_usd)


def usage_totals(since: str | None = None, *, store: Store | None = None) -> dict[str, Any]:
    with connect(store) as db:
        return db.usage_totals(since)
