"""A cold build of many new files uses a second process and gives exactly the serial result.

The rows are built by forked workers in chunks and taken in walk order; a worker that dies or
raises leaves the build to the parent, never a half index; a small vault or a process with
other threads never forks.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ecc.vault import rowbuild
from ecc.vault.format import serialize_memory_document
from tests.vault.conftest import full_memory
from tests.vault.test_cold_build import _write_vault

QUERY = "migration rollout"


@pytest.fixture
def pids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The ids of the processes that built rows (a file each appends to: forks inherit it)."""
    log = tmp_path / "builders.log"
    original = rowbuild.build_chunk

    def recording(*args):
        with open(log, "a") as file:
            file.write(f"{os.getpid()}\n")
        return original(*args)

    monkeypatch.setattr(rowbuild, "build_chunk", recording)
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 40, raising=False)
    monkeypatch.setattr(rowbuild, "CHUNK", 16, raising=False)
    monkeypatch.setattr(rowbuild, "_load", lambda: 0.0, raising=False)  # an idle machine

    def seen() -> set[int]:
        return {int(line) for line in log.read_text().split()} if log.exists() else set()

    return seen


def _write_odd_documents(repo: Path) -> None:
    """A suspected secret, a misplaced memory and a broken file among the valid ones."""
    notes = repo / ".ecc/memory/project/notes"
    secret = full_memory(id="mem_20260726_secret", body="token ghp_" + "A1" * 18)
    (notes / "mem_20260726_secret.md").write_text(serialize_memory_document(secret))
    misplaced = full_memory(id="mem_20260726_elsewhere", body="migration")
    (notes / "mem_20260726_other.md").write_text(serialize_memory_document(misplaced))
    (notes / "mem_20260726_broken.md").write_text("---\nnot: frontmatter\n")


def _rows(isolated_env: Path) -> list[tuple]:
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT docs.docid, rel, stamp, nbytes, code, id_key, kind, status, updated_at,"
            " title_l, tags_d, meta_l, targets_d, links_d, data"
            " FROM docs LEFT JOIN packed USING (docid) ORDER BY docid"
        ).fetchall()
    finally:
        db.close()


def _serial_rows(make_service, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """The rows a serial build writes, with the index then removed again."""
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 10**9, raising=False)
    make_service().search(QUERY, scopes=["project"])
    rows = _rows(isolated_env)
    for path in (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3*"):
        path.unlink()
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 40)
    return rows


def test_a_large_cold_build_forks_and_matches_the_serial_build(
    make_service, repo: Path, isolated_env: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 300)
    _write_odd_documents(repo)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    expected_doctor = make_service(cache_dir=None).doctor(scopes=["project"])
    serial = _serial_rows(make_service, isolated_env, monkeypatch)
    log_before = pids()

    assert make_service().search(QUERY, scopes=["project"]) == expected
    builders = pids() - log_before
    assert builders - {os.getpid()}, "no second process built rows"
    assert _rows(isolated_env) == serial  # same rows, same docids, same bytes
    assert make_service().doctor(scopes=["project"]) == expected_doctor
    assert expected["diagnostics"]["invalidFileCount"] == 3


def test_a_worker_that_dies_leaves_the_build_to_the_parent(
    make_service, repo: Path, isolated_env: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 200)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    serial = _serial_rows(make_service, isolated_env, monkeypatch)
    parent = os.getpid()
    recording = rowbuild.build_chunk

    marker = isolated_env / "a-worker-died"

    def dying(*args):
        if os.getpid() != parent:
            marker.touch()
            os._exit(3)
        return recording(*args)

    monkeypatch.setattr(rowbuild, "build_chunk", dying)
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert marker.exists()
    assert _rows(isolated_env) == serial


def test_a_worker_that_raises_leaves_the_build_to_the_parent(
    make_service, repo: Path, isolated_env: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 200)
    expected = make_service(cache_dir=None).search(QUERY, scopes=["project"])
    parent = os.getpid()
    recording = rowbuild.build_chunk

    marker = isolated_env / "a-worker-raised"

    def raising(*args):
        if os.getpid() != parent:
            marker.touch()
            raise RuntimeError("a worker's own failure")
        return recording(*args)

    monkeypatch.setattr(rowbuild, "build_chunk", raising)
    assert make_service().search(QUERY, scopes=["project"]) == expected
    assert marker.exists()
    assert len(_rows(isolated_env)) == 200


def test_a_small_vault_or_a_threaded_process_builds_in_process(
    make_service, repo: Path, isolated_env: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_vault(repo, 30)  # under the threshold of 40
    make_service().search(QUERY, scopes=["project"])
    assert pids() == {os.getpid()}
    _write_vault(repo, 300)  # 300 new or changed files
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        found = make_service().search(QUERY, scopes=["project"])
    finally:
        stop.set()
        other.join()
    assert pids() == {os.getpid()}
    assert found == make_service(cache_dir=None).search(QUERY, scopes=["project"])


def test_a_machine_with_no_core_to_spare_builds_in_process(
    make_service, repo: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second process only adds its own overhead when others keep every core busy."""
    monkeypatch.setattr(rowbuild, "_load", lambda: 2.0 * os.cpu_count(), raising=False)
    _write_vault(repo, 300)
    found = make_service().search(QUERY, scopes=["project"])
    assert pids() == {os.getpid()}
    assert found == make_service(cache_dir=None).search(QUERY, scopes=["project"])


SEARCHER = """
import sys
from ecc.vault import rowbuild
from ecc.vault.backend import load_backend
rowbuild._load = lambda: 0.0  # as on an idle machine
from ecc.vault.service import VaultService
VaultService(load_backend("files"), cwd=sys.argv[1]).search("migration", scopes=["project"])
"""


def test_a_build_killed_with_its_workers_running_leaves_no_worker_and_no_wrong_index(
    make_service, repo: Path, isolated_env: Path
) -> None:
    import psutil

    _write_vault(repo, 2500)  # above the default threshold: a real process forks its workers
    builder = subprocess.Popen([sys.executable, "-c", SEARCHER, str(repo)])
    parent = psutil.Process(builder.pid)
    deadline = time.monotonic() + 60
    workers: list[psutil.Process] = []
    while not workers and builder.poll() is None and time.monotonic() < deadline:
        workers = parent.children()
        time.sleep(0.005)
    assert workers, "the build ended or hung before it forked a worker"
    builder.send_signal(signal.SIGKILL)
    assert builder.wait(timeout=30) == -signal.SIGKILL
    _, alive = psutil.wait_procs(workers, timeout=30)
    assert not alive, "a worker outlived its killed parent"
    expected = make_service(cache_dir=None).search("migration", scopes=["project"])
    assert make_service().search("migration", scopes=["project"]) == expected


def test_rows_from_workers_are_the_serial_rows_with_their_words_interned(
    repo: Path, isolated_env: Path, pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's chunk comes back marshalled: every column, the word counts included, as the
    serial build makes it, and the words interned again (shared, not a copy a row)."""
    from ecc.vault.backend import load_backend

    _write_vault(repo, 200)
    _write_odd_documents(repo)
    store = load_backend("files").open(repo, {"HOME": str(isolated_env)})
    try:
        todo = store.scan("project", 10_000).documents
        parallel = list(rowbuild.build_rows(store, "project", todo, parallel=True))
        assert pids() - {os.getpid()}, "no worker built rows"
        serial = list(rowbuild.build_rows(store, "project", todo, parallel=False))
        # a chunk is built a step at a time over all its documents: as each built alone
        alone = [rowbuild.build_chunk(store, "project", [item])[0] for item in todo]
    finally:
        store.close()
    assert parallel == serial == alone
    assert sum(row[-1] is None for row in parallel) == 3
    for row in parallel:
        if row[-1] is not None:
            words, counts = row[-1]
            assert type(counts) is bytes and len(counts) == len(words)
            assert all(word is sys.intern(word) for word in words)
