"""The SQLite store's own plumbing: its write transactions, its text locations and its times.

The store opens the ``_sqlite3`` driver and writes a class for its transaction (``ecc hook``
records through it without importing sqlite3's dbapi2, datetime or contextlib): these pin down
what those must keep doing.
"""

from __future__ import annotations

import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ecc.runtime import paths
from ecc.store.models import State, iso, now_iso, parse_iso
from ecc.store.open import default_path, open_store
from ecc.store.sqlite import ROWS_PER_INSERT, SqliteStore


def _values(database: Path) -> list[int]:
    with sqlite3.connect(database) as other:  # another connection sees only what committed
        return [row[0] for row in other.execute("SELECT x FROM t ORDER BY x")]


def _store(tmp_path: Path) -> SqliteStore:
    store = SqliteStore(str(tmp_path / "s.db"))
    store.conn.execute("CREATE TABLE t (x INTEGER)")
    return store


def test_a_transaction_commits_a_clean_block(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with store.transaction():
        store._exec("INSERT INTO t VALUES (1)")
        assert store.conn.in_transaction
    assert not store.conn.in_transaction
    assert _values(tmp_path / "s.db") == [1]
    store.close()


def test_a_transaction_rolls_back_a_block_that_raises(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(KeyError, match="inside"), store.transaction():
        store._exec("INSERT INTO t VALUES (1)")
        raise KeyError("inside")
    assert not store.conn.in_transaction
    assert _values(tmp_path / "s.db") == []
    store.close()


def test_a_commit_that_fails_is_rolled_back_and_raised(tmp_path: Path) -> None:
    """A deferred foreign key is checked at COMMIT: the write is undone, not left open."""
    store = _store(tmp_path)
    store.conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    store.conn.execute(
        "CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)"
    )
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), store.transaction():
        store._exec("INSERT INTO t VALUES (1)")
        store._exec("INSERT INTO child VALUES (99)")
    assert not store.conn.in_transaction
    assert _values(tmp_path / "s.db") == []
    store.close()


def test_a_store_opened_from_text_or_path_is_the_same_file(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "s.db"
    by_text = SqliteStore(str(nested))
    assert by_text.path == nested and by_text.label == str(nested)
    assert os.stat(nested.parent).st_mode & 0o777 == 0o700  # every level it made is private
    assert os.stat(nested).st_mode & 0o777 == 0o600
    by_text.close()
    with open_store(default_path()) as store:
        assert store.path == paths.state_dir() / "ecc.db"
        assert store.path.exists()


def test_a_relative_store_path_opens_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = SqliteStore("relative.db")
    store.close()
    assert (tmp_path / "relative.db").is_file()


def test_now_is_stamped_in_the_one_time_format() -> None:
    """``now_iso`` reads the clock through ``time``: what ``iso`` writes of the moment."""
    before = datetime.now(UTC)
    stamp = now_iso()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    moment = parse_iso(stamp)
    assert moment is not None and iso(moment) == stamp
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= moment <= after


@pytest.mark.parametrize("count", [0, 1, 99, 100, 101, 250, 5000])
def test_output_rows_are_stored_in_order_a_hundred_a_statement(tmp_path: Path, count: int) -> None:
    """A batch of captured lines goes in :data:`ROWS_PER_INSERT` rows a statement (the driver's
    per-statement work was most of a flood's capture), stored exactly, in order, whatever the
    batch's size against that group."""
    store = SqliteStore(tmp_path / "s.db")
    store.insert_session(
        "s1", task="t", harness="shell", state=State.PENDING, reason="c", project_dir="/",
        working_dir="/",
    )  # fmt: skip
    rows = [
        (seq, "stderr" if seq % 7 == 0 else "stdout", f"2026-01-01T00:00:{seq % 60:02d}.000Z",
         f"line {seq} ✓" if seq % 3 else "")
        for seq in range(1, count + 1)
    ]  # fmt: skip
    inserts: list[str] = []
    store.conn.set_trace_callback(
        lambda sql: inserts.append(sql) if sql.startswith("INSERT INTO output") else None
    )
    store.append_output("s1", rows)
    store.conn.set_trace_callback(None)
    stored = store.read_output("s1")
    assert [(r["seq"], r["stream"], r["ts"], r["line"]) for r in stored] == rows
    order = store.conn.execute("SELECT seq FROM output ORDER BY rowid").fetchall()
    assert [row[0] for row in order] == list(range(1, count + 1))
    whole, rest = divmod(count, ROWS_PER_INSERT)
    assert len(inserts) == whole + rest
    store.close()
