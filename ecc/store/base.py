"""The session store's interface and the queries both dialects share, written once.

:class:`Store` holds every read and write of session state in plain SQL that SQLite and
PostgreSQL both accept; a dialect (:mod:`ecc.store.sqlite`, :mod:`ecc.store.postgres`) supplies
only the plumbing: the connection, how a statement runs (placeholders), transactions, the
schema version, serialising locks, the change counter and the daemon lock. Open a store with
:func:`ecc.store.open.open_store`, which picks the dialect from the URL.

Portability rules for the queries here and in :mod:`ecc.store.records`:

* ``?`` placeholders (the PostgreSQL store translates them to ``%s``); ``ON CONFLICT``,
  ``RETURNING`` and sub-selects only;
* timestamps are ISO-8601 UTC text with milliseconds and ``Z`` (they sort as text);
* atomic claims are single conditional ``UPDATE`` statements checked by row count — never a
  read-then-write in the caller; the one place that needs a serialising lock
  (:meth:`Store.claim_slot`, in :mod:`ecc.store.claims`) hides it behind the method;
* dialect-only statements (``PRAGMA``, ``BEGIN IMMEDIATE``, advisory locks) stay in the dialect.
"""

from __future__ import annotations

from ecc.contract.errors import EccError
from ecc.store.claims import Claims
from ecc.store.conflicts import Conflicts
from ecc.store.conversation import Conversation
from ecc.store.exports import Exports
from ecc.store.groups import Groups
from ecc.store.mail import Mail
from ecc.store.models import (
    ACTIVE,
    TERMINAL,
    InvalidTransition,
    Session,
    State,
    check_transition,
    now_iso,
)
from ecc.store.records import SESSION_ROWS, Records
from ecc.store.schedules import Schedules
from ecc.store.schema import MIGRATIONS, SCHEMA_VERSION, SESSION_COLUMNS

OUTPUT_COLUMNS = ("session_id", "seq", "stream", "ts", "line")  # an output row, in order
INSERT_OUTPUT = f"INSERT INTO output ({', '.join(OUTPUT_COLUMNS)}) VALUES "
OUTPUT_VALUES = f"({', '.join('?' * len(OUTPUT_COLUMNS))})"  # one row's placeholders

TYPE_CHECKING = False  # typing stays unimported here: ``ecc hook`` and ``ecc run -d`` open stores
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any


class StoreError(EccError):
    """The store could not be opened or is from a newer ecc."""


class IdCollision(EccError):
    """A new session id already exists (the caller retries with another)."""


def redact(url: str) -> str:
    """A store URL fit for messages and logs: any password is replaced by ``***``."""
    import re  # only for messages: opening a store needs no regular expressions

    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


class DaemonLock:
    """What :meth:`Store.daemon_lock` returns: the lock that keeps a second daemon off a store."""

    path: Path  # what the daemon's log names as its lock

    def acquire(self) -> None:
        """Take the lock or raise :class:`EccError` naming the holder; released on death."""
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError


class Store(Records, Claims, Conversation, Schedules, Conflicts, Groups, Mail, Exports):
    """One connection to the session database. Not shared between threads."""

    dialect: str
    url: str
    path: Path  # files that belong beside the store on this machine (budget state, daemon log)
    conn: Any
    _insertion_order: str  # the column ordering rows by insertion (ties of ``created_at``)
    # What a statement raises when a later try may succeed (a lock, a full disk, a lost
    # connection): the runner retries these, never a logic error.
    transient_errors: tuple[type[BaseException], ...] = (StoreError,)

    # -- plumbing each dialect provides ----------------------------------------------------

    @property
    def label(self) -> str:
        """The store's name in messages (never a password)."""
        raise NotImplementedError

    def reopen(self) -> Store:
        """A new connection to the same store (for another thread)."""
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; every statement inside commits or rolls back together."""
        raise NotImplementedError

    def set_lock_wait(self, seconds: float) -> None:
        """How long a statement waits for another writer's lock before it fails (the runner
        keeps this short and retries on its own, so it can look up between attempts)."""

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        raise NotImplementedError

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        raise NotImplementedError

    def _executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _serialise(self, name: str) -> None:
        """Inside a transaction: hold the lock ``name`` until it ends."""
        raise NotImplementedError

    def _insert_output(self, rows: Sequence[tuple[str, int, str, str, str]]) -> None:
        """Insert output rows ``(session_id, seq, stream, ts, line)`` (inside a transaction);
        a dialect may have a faster bulk path."""
        self._executemany(INSERT_OUTPUT + OUTPUT_VALUES, rows)

    def change_counter(self) -> int:
        """A number that changes whenever another connection commits (a cheap poll for
        watchers). It need not change for this connection's own writes."""
        raise NotImplementedError

    def daemon_lock(self) -> DaemonLock:
        """The lock that keeps a second daemon off this store."""
        raise NotImplementedError

    def _schema_version(self) -> int | None:
        """The applied schema version (0 or None: an empty database); performs no writes."""
        raise NotImplementedError

    def _locked_schema_version(self) -> int:
        """Inside the migration transaction: make the version recordable and read it again."""
        raise NotImplementedError

    def _set_schema_version(self, version: int) -> None:
        raise NotImplementedError

    def _ddl(self, statement: str) -> str:
        """A migration statement in this dialect's column types (the schema is shared)."""
        return statement

    def _before_migration(self) -> None:
        """Settings a database needs before its first migration (outside the transaction)."""

    # -- connection ------------------------------------------------------------------------

    def _migrate(self) -> None:
        """Apply the migrations this database lacks, under a lock (racing openers wait)."""
        version = self._schema_version()
        if version == SCHEMA_VERSION:
            return
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"the session store {self.label} has schema version {version}, newer than this "
                f"ecc understands ({SCHEMA_VERSION}); upgrade ecc"
            )
        self._before_migration()
        with self.transaction():
            self._serialise("migrate")
            version = self._locked_schema_version()  # re-read: another opener may have won
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    self._exec(self._ddl(statement))
                self._set_schema_version(number + 1)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions --------------------------------------------------------------------------

    def insert_session(
        self, session_id: str, *, task: str, harness: str, state: State, reason: str, **fields: Any
    ) -> Session:
        """Insert a new session and its creation event; :class:`IdCollision` if the id exists."""
        unknown = set(fields) - SESSION_COLUMNS
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
        row = self._one(f"{SESSION_ROWS} WHERE id = ?", (session_id,))
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
        row = self._one(f"{SESSION_ROWS} ORDER BY created_at DESC, {order} DESC LIMIT 1")
        return Session.from_row(row) if row else None

    def list_sessions(
        self, states: Iterable[State] | None = None, limit: int | None = None
    ) -> list[Session]:
        sql = SESSION_ROWS
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
        rows = self._rows(f"{SESSION_ROWS} WHERE updated_at >= ?", (since,))
        return [Session.from_row(row) for row in rows]

    def update_session(self, session_id: str, **fields: Any) -> bool:
        """Set non-state columns; state changes must use :meth:`transition`."""
        if not fields:
            return False
        unknown = set(fields) - SESSION_COLUMNS
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
        unknown = set(fields) - SESSION_COLUMNS
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
            for table in (
                "output",
                "output_spool",
                "events",
                "worktree_queue",
                "messages",
                "exports",
            ):
                self._exec(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self._exec(
                "UPDATE tool_calls SET session_id = NULL WHERE session_id = ?", (session_id,)
            )
            self._exec(
                "UPDATE notifications SET session_id = NULL WHERE session_id = ?", (session_id,)
            )
            self._exec("DELETE FROM mail WHERE recipient_id = ?", (session_id,))
            self._exec("DELETE FROM sessions WHERE id = ?", (session_id,))

    # -- spooled output: lines and how far each spool file is stored, moved together ------

    def spool_cursors(self, session_id: str, run: int) -> dict[str, tuple[int, bool]]:
        """How far each stream of run ``run``'s spool is stored: ``{stream: (bytes consumed,
        inside an over-long line)}``; a stream not listed is stored from its first byte."""
        rows = self._rows(
            "SELECT stream, consumed, skipping FROM output_spool WHERE session_id = ? AND run = ?",
            (session_id, run),
        )
        return {row["stream"]: (int(row["consumed"]), bool(row["skipping"])) for row in rows}

    def append_spooled(
        self,
        session_id: str,
        run: int,
        rows: Sequence[tuple[int, str, str, str]],
        moves: dict[str, tuple[tuple[int, bool], tuple[int, bool]]],
    ) -> bool:
        """Insert lines ``(seq, stream, ts, line)`` read from run ``run``'s spool and move each
        stream's cursor from where they were read (``moves[stream][0]``) to past them
        (``[1]``), in one transaction, so a crash keeps both or neither. False, with nothing
        written, when a cursor was elsewhere (another reader stored that part first).
        """

        class CursorMoved(Exception):
            pass

        try:
            with self.transaction():
                for stream, (old, new) in moves.items():
                    if old == (0, False):
                        self._exec(
                            "INSERT INTO output_spool (session_id, run, stream) VALUES (?, ?, ?) "
                            "ON CONFLICT (session_id, run, stream) DO NOTHING",
                            (session_id, run, stream),
                        )
                    moved = self._exec(
                        "UPDATE output_spool SET consumed = ?, skipping = ? WHERE session_id = ? "
                        "AND run = ? AND stream = ? AND consumed = ? AND skipping = ?",
                        (new[0], int(new[1]), session_id, run, stream, old[0], int(old[1])),
                    )
                    if moved != 1:
                        raise CursorMoved(stream)
                if rows:
                    self._insert_output([(session_id, *row) for row in rows])
        except CursorMoved:
            return False
        return True
