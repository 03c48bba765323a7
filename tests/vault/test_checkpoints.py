"""A load's writes are checkpointed beside its later work, not at their commit.

Copying a cold build's WAL into the database and syncing both took a third of a second after
the commit of 35,000 memories; the load defers it (``ScopeIndex.defer_checkpoints``) and runs
it on a thread once the next scope's workers are forked, or beside the search, and waits for
it before its indexes close. What it must keep: every scope's build still forks, the
checkpoints are all done when the call returns, and the results are the same.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from ecc.vault import crew, rowbuild
from ecc.vault.format import serialize_memory_document
from ecc.vault.index import ScopeIndex
from tests.vault.conftest import full_memory
from tests.vault.test_cold_build import _write_vault

QUERY = "migration rollout"


def _docs_in_database_file(path: Path, tmp_path: Path) -> int:
    """The rows the database file holds by itself, without its WAL (a copy opened alone)."""
    copy = tmp_path / f"alone-{os.urandom(4).hex()}.sqlite3"
    shutil.copyfile(path, copy)
    db = sqlite3.connect(copy)
    try:
        return db.execute("SELECT count(*) FROM docs").fetchone()[0]
    except sqlite3.OperationalError:  # no table yet: the schema is in the WAL too
        return 0
    finally:
        db.close()


def _rows(count: int) -> list[tuple]:
    """``count`` invalid rows with a large stamp each: enough WAL pages for a checkpoint."""
    return [
        (f"notes/n{n}.md", "s" * 3000, 0, "invalid-document", *(None,) * 11) for n in range(count)
    ]


@pytest.mark.parametrize("deferred", [False, True])
def test_a_deferred_commit_leaves_the_database_file_to_the_checkpoint(
    tmp_path: Path, deferred: bool
) -> None:
    index = ScopeIndex(tmp_path / "cache", "files\0/vault/project")
    try:
        assert index.persistent and index.path is not None
        if deferred:
            assert index.defer_checkpoints()
        index.apply(_rows(2000), [])  # ~1,500 pages: past the automatic checkpoint's 1,000
        in_file = _docs_in_database_file(index.path, tmp_path)
        if not deferred:
            assert in_file == 2000  # the commit checkpointed, as SQLite does by default
            return
        assert in_file == 0  # committed, but only in the WAL
        assert index.query("SELECT count(*) FROM docs") == [(2000,)]
        index.checkpoint()
        assert _docs_in_database_file(index.path, tmp_path) == 2000
    finally:
        index.close()


def test_an_index_in_memory_has_nothing_to_defer() -> None:
    index = ScopeIndex(None, "files\0/vault/project")
    try:
        assert not index.defer_checkpoints()
        index.checkpoint()  # nothing to do, and no error
    finally:
        index.close()


def _write_scope(root: Path, scope: str, count: int) -> None:
    for n in range(count):
        memory = full_memory(
            id=f"mem_20260726_{scope}{n:016x}",
            scope=scope,
            title=f"Migration rollout {n}",
            body=f"migration rollout step {n} of the {scope} scope",
        )
        path = root / "notes" / f"{memory['id']}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(serialize_memory_document(memory))


def _scope_of(key: str) -> str:
    """The scope an index key (backend, NUL, the scope's root) names, in these tests."""
    for suffix, scope in (("/memory/project", "project"), ("/memory/team", "team")):
        if key.endswith(suffix):
            return scope
    assert key.endswith("/home/.ecc/memory"), key
    return "user"


@pytest.fixture
def journal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """What happened, in order: ("build", pid, scope) for each chunk built (forked workers
    inherit the log file), ("fork", threads running) for each worker forked and ("checkpoint",
    thread name, scope) for each checkpoint."""
    log = tmp_path / "journal.log"
    log.touch()
    build_chunk, checkpoint = rowbuild.build_chunk, ScopeIndex.checkpoint

    def building(store, scope, items):
        with open(log, "a") as file:
            file.write(f"build {os.getpid()} {scope}\n")
        return build_chunk(store, scope, items)

    def checkpointing(self: ScopeIndex) -> None:
        # slow enough that a later build would find it running, were it not waited for
        threading.Event().wait(0.3)
        checkpoint(self)
        with open(log, "a") as file:
            file.write(f"checkpoint {threading.current_thread().name} {_scope_of(self.key)}\n")

    def forking() -> int:
        threads = threading.active_count()  # before the fork: a child copies no thread
        pid = fork()
        if pid:
            with open(log, "a") as file:
                file.write(f"fork {threads}\n")
        return pid

    fork = os.fork
    monkeypatch.setattr(rowbuild, "build_chunk", building)
    monkeypatch.setattr(ScopeIndex, "checkpoint", checkpointing)
    monkeypatch.setattr(crew.os, "fork", forking)
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 40, raising=False)
    monkeypatch.setattr(rowbuild, "CHUNK", 16, raising=False)
    monkeypatch.setattr(rowbuild, "_load", lambda: 0.0, raising=False)  # an idle machine
    return lambda: [line.split() for line in log.read_text().splitlines()]


def test_each_scope_of_a_cold_build_forks_and_the_checkpoints_run_on_a_thread_before_it_returns(
    make_service, repo: Path, isolated_env: Path, journal
) -> None:
    _write_vault(repo, 300)
    _write_scope(repo / ".ecc/memory/team", "team", 200)
    _write_scope(isolated_env / ".ecc/memory", "user", 200)
    scopes = ["project", "team", "user"]
    expected = make_service(cache_dir=None).search(QUERY, scopes=scopes)
    in_memory = journal()
    assert in_memory and all(event[0] != "checkpoint" for event in in_memory)

    assert make_service().search(QUERY, scopes=scopes) == expected

    events = journal()[len(in_memory) :]
    for scope in ("project", "team", "user"):
        builders = {int(event[1]) for event in events if event[0] == "build" and event[2] == scope}
        assert builders - {os.getpid()}, f"no worker built the {scope} scope's rows"
    forks = [event for event in events if event[0] == "fork"]
    assert forks and all(event == ["fork", "1"] for event in forks)  # no thread ran at a fork
    checkpoints = [event[1:] for event in events if event[0] == "checkpoint"]
    assert [name for _, name in checkpoints] == ["project", "team", "user"]
    assert {thread for thread, _ in checkpoints} == {"ecc-index-checkpoint"}
    # the first scope's checkpoint ran beside a later build: it came before that build's end
    last_build = max(at for at, event in enumerate(events) if event[0] == "build")
    assert events.index(["checkpoint", "ecc-index-checkpoint", "project"]) < last_build
    assert threading.active_count() == 1  # waited for before the call returned
    indexes = sorted((isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3"))
    assert len(indexes) == 3
    assert sorted(_docs_in_database_file(path, isolated_env) for path in indexes) == [200, 200, 300]
    assert not list((isolated_env / ".cache/ecc/memory-index").glob("*-wal"))
    assert make_service().search(QUERY, scopes=scopes) == expected  # warm, from those files


def test_a_checkpoint_of_an_index_removed_meanwhile_creates_nothing(tmp_path: Path) -> None:
    index = ScopeIndex(tmp_path / "cache dir", "files\0/vault/project")
    try:
        assert index.defer_checkpoints() and index.path is not None
        index.apply(_rows(10), [])
        for path in index.path.parent.iterdir():
            path.unlink()
        index.checkpoint()  # no error, and no empty database in its place
        assert list(index.path.parent.iterdir()) == []
    finally:
        index.close()
