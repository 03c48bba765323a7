"""Memory embeddings kept beside ecc's memory indexes, so a search embeds only what is new.

One SQLite file in the directory ecc hands the ranker (``<cache>/memory-index/``), private to
the user like the indexes: a row per (index, text digest, model). A changed memory has a new
digest, so it is embedded again; the rows of an index offered whole that no candidate names any
more (a removed or changed memory) are deleted. Deleting the file only costs time.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np

FILE = "semantic-embeddings.sqlite3"
_SCHEMA = """CREATE TABLE IF NOT EXISTS vectors(
  index_id TEXT NOT NULL, digest TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
  PRIMARY KEY(index_id, digest, model)) WITHOUT ROWID"""


class EmbeddingCache:
    """The stored vectors of one model; an in-memory table when ``directory`` is None or fails."""

    def __init__(self, directory: Path | None, model: str) -> None:
        self.model = model
        self.path: Path | None = None
        self.db = self._open(directory) if directory is not None else None
        if self.db is None:
            self.db = sqlite3.connect(":memory:", isolation_level=None)
            self.db.execute(_SCHEMA)

    def _open(self, directory: Path) -> sqlite3.Connection | None:
        path = directory / FILE
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            os.close(fd)
            db = sqlite3.connect(str(path), timeout=10, isolation_level=None)
            db.execute("PRAGMA busy_timeout=10000")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        except (OSError, sqlite3.Error):
            return None  # a read-only or broken cache: embed in memory, as ecc's index does
        self.path = path
        return db

    def get(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], np.ndarray]:
        """The stored vectors of ``(index, digest)`` pairs that have one."""
        assert self.db is not None
        found: dict[tuple[str, str], np.ndarray] = {}
        wanted = set(keys)
        for index_id in {index_id for index_id, _ in keys}:
            for digest, blob in self.db.execute(
                "SELECT digest, vector FROM vectors WHERE index_id = ? AND model = ?",
                (index_id, self.model),
            ):
                if (index_id, digest) in wanted:
                    found[(index_id, digest)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, vectors: dict[tuple[str, str], np.ndarray]) -> None:
        assert self.db is not None
        rows = [
            (index_id, digest, self.model, vector.astype(np.float32).tobytes())
            for (index_id, digest), vector in vectors.items()
        ]
        if rows:
            with _transaction(self.db):
                self.db.executemany("INSERT OR REPLACE INTO vectors VALUES(?, ?, ?, ?)", rows)

    def forget_others(self, index_id: str, keep: set[str]) -> int:
        """Delete the rows of ``index_id`` whose digest is not in ``keep``; how many went."""
        assert self.db is not None
        stored = [
            digest
            for (digest,) in self.db.execute(
                "SELECT digest FROM vectors WHERE index_id = ?", (index_id,)
            )
        ]
        gone = [(index_id, digest) for digest in stored if digest not in keep]
        if gone:
            with _transaction(self.db):
                self.db.executemany("DELETE FROM vectors WHERE index_id = ? AND digest = ?", gone)
        return len(gone)

    def count(self) -> int:
        assert self.db is not None
        return int(self.db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


class _transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
