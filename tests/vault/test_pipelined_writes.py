"""A refresh writes its rows to the index while forked workers still build later ones, in one
transaction: the rows are exactly those of a serial build, and a build killed after writing
some of them leaves an index that no later load takes as complete.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.vault import index as index_module
from ecc.vault import loading, ranking, rowbuild, segment
from ecc_plugins import files_backend
from tests.vault.test_cold_build import _write_vault
from tests.vault.test_parallel_build import QUERY, _rows, _serial_rows, _write_odd_documents


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small chunks and write batches, and an idle machine: a 300-file build forks."""
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 40)
    monkeypatch.setattr(rowbuild, "CHUNK", 16)
    monkeypatch.setattr(rowbuild, "_load", lambda: 0.0)
    monkeypatch.setattr(loading, "WRITE_BATCH", 16)


def test_rows_are_written_while_workers_build_and_match_the_serial_build(
    make_service, repo: Path, isolated_env: Path, forking, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 300)
    _write_odd_documents(repo)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    serial = _serial_rows(make_service, isolated_env, monkeypatch)
    writes: list[tuple[int, bool]] = []  # (rows, whether the build had ended)
    ended = [False]
    original_build_rows = loading.build_rows
    original_insert = index_module.RowWriter._insert

    def build_rows(*args, **kwargs):
        held = None  # each row is passed on once the next one is built: the last, at the end
        for row in original_build_rows(*args, **kwargs):
            if held is not None:
                yield held
            held = row
        ended[0] = True
        if held is not None:
            yield held

    def insert(self, rows):
        writes.append((len(rows), ended[0]))
        original_insert(self, rows)

    monkeypatch.setattr(loading, "build_rows", build_rows)
    monkeypatch.setattr(index_module.RowWriter, "_insert", insert)
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert any(not done for _, done in writes), "no row was written before the build ended"
    assert sum(count for count, _ in writes) == 303
    assert _rows(isolated_env) == serial  # same rows, same docids, same bytes


KILLED_BUILDER = """
import os, signal, sys
from ecc.vault import index, loading, rowbuild
from ecc.vault.backend import load_backend
from ecc.vault.service import VaultService
rowbuild._load = lambda: 0.0  # as on an idle machine
rowbuild.PARALLEL_MIN, rowbuild.CHUNK, loading.WRITE_BATCH = 40, 16, 16
original = index.RowWriter._insert
def insert(self, rows):
    original(self, rows)
    if self.next_docid > 100:  # rows written, the transaction not committed
        os.kill(os.getpid(), signal.SIGKILL)
index.RowWriter._insert = insert
VaultService(load_backend("files"), cwd=sys.argv[1]).search("migration", scopes=["project"])
"""


def test_a_build_killed_after_writing_rows_leaves_no_index_taken_as_complete(
    make_service, repo: Path, isolated_env: Path
) -> None:
    _write_vault(repo, 300)
    builder = subprocess.run([sys.executable, "-c", KILLED_BUILDER, str(repo)], check=False)
    assert builder.returncode == -signal.SIGKILL
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT count(*) FROM docs").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM meta WHERE key = 'scan'").fetchone() == (0,)
    finally:
        db.close()
    expected = make_service(cache_dir=None).search("migration", scopes=["project"])
    assert make_service().search("migration", scopes=["project"]) == expected
    assert make_service().search("migration", scopes=["project"]) == expected  # settled


def test_a_write_that_fails_mid_build_falls_back_to_memory_with_identical_results(
    make_service, repo: Path, isolated_env: Path, forking, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 300)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    original = index_module.RowWriter._insert
    calls = [0]

    def failing(self, rows):
        calls[0] += 1
        if calls[0] == 2:
            raise sqlite3.OperationalError("disk I/O error")
        original(self, rows)

    monkeypatch.setattr(index_module.RowWriter, "_insert", failing)
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert calls[0] >= 2
    monkeypatch.setattr(index_module.RowWriter, "_insert", original)
    assert make_service().search(QUERY, scopes=["project"]) == expected


def _segment(isolated_env: Path) -> tuple[list, list]:
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    try:
        meta = db.execute("SELECT key, value FROM meta WHERE key LIKE 'seg_%' ORDER BY key")
        keys = db.execute("SELECT key, slots, vals FROM seg_keys ORDER BY key")
        return meta.fetchall(), keys.fetchall()
    finally:
        db.close()


def test_a_cold_build_writes_the_segment_a_rebuild_makes_from_its_rows(
    make_service, repo: Path, isolated_env: Path, forking, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The segment is gathered while the rows are written (workers building later ones) and
    committed with them: the search after it builds none, and it is the one a rebuild from
    the rows (word counts read back from the bodies) makes, slot for slot."""
    _write_vault(repo, 300)
    _write_odd_documents(repo)  # invalid rows hold slots too
    monkeypatch.setattr(files_backend, "RACY_WINDOW_NS", 0)  # stamps kept: no row read again
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])

    def no_build(index) -> None:
        raise AssertionError("the cold build left the segment to the search")

    with monkeypatch.context() as patch:
        patch.setattr(ranking, "build_segment", no_build)
        assert make_service().search(QUERY, scopes=["project"]) == expected
    written = _segment(isolated_env)
    assert dict(written[0])["seg_size"] == 303
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    with db:  # as if the segment had never been built
        db.execute("DELETE FROM meta WHERE key LIKE 'seg_%'")
        db.execute("DELETE FROM seg_keys")
    db.close()
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert _segment(isolated_env) == written


def test_a_small_cold_build_leaves_the_segment_to_the_search(
    make_service, repo: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As few rows as the search scores in SQL alone get no segment from the build."""
    _write_vault(repo, 40)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert _segment(isolated_env) == ([], [])
    monkeypatch.setattr(segment, "MIN_DELTA", 10)  # now the next search builds one itself
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert dict(_segment(isolated_env)[0])["seg_size"] == 40


def test_a_build_without_workers_writes_its_rows_as_it_goes(
    make_service, repo: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows wait in memory a few write batches at most, workers or not (then the whole vault
    waited for the end), and the index is the serial build's."""
    _write_vault(repo, 300)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    serial = _serial_rows(make_service, isolated_env, monkeypatch)
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 10**9)  # no workers
    monkeypatch.setattr(loading, "WRITE_BATCH", 16)
    batches: list[int] = []
    original = index_module.RowWriter._insert

    def insert(self, rows):
        batches.append(len(rows))
        original(self, rows)

    monkeypatch.setattr(index_module.RowWriter, "_insert", insert)
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert sum(batches) == 300 and len(batches) > 1
    assert max(batches) <= loading.PENDING_MAX * 16
    assert _rows(isolated_env) == serial
