"""A warm search skips the vault walk only while a live tree watcher vouches that nothing changed.

The watcher (``ecc.runtime.treewatch``, run by ``ecc daemon``) is a real process with real
inotify here. Every hand change, at any depth, must be seen by the next search exactly as a
full rescan sees it; a missing, restarted, overflowed or lying watcher means a walk.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ecc_plugins.files_backend as files_backend
from ecc.runtime import watchclient
from ecc.vault.backend import load_backend
from ecc.vault.format import serialize_memory_document
from ecc.vault.safefs import TEMP_NAME_PREFIX
from ecc.vault.service import VaultService
from tests.conftest import git
from tests.vault.conftest import full_memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux")

WORDS = ["alpha", "bravo", "delta", "gamma", "omega", "sigma"]  # all five letters long


class Vault:
    """A repository with a project vault, a cached service on it, and a count of its walks."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.repo = work / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        self.root = self.repo / ".ecc/memory/project"
        self.cache = work / "cache"
        self.env = {**os.environ, "HOME": str(work), "ECC_CACHE_DIR": str(self.cache)}
        for name in ("ECC_CONFIG_DIR", "ECC_STATE_DIR", "ECC_DATA_DIR"):
            self.env[name] = str(work / name.lower())
        self.backend = load_backend("files")
        self.service = VaultService(self.backend, cwd=self.repo, env=self.env, cache_dir=self.cache)

    def write(self, n: int, word: str, sub: str = "") -> Path:
        memory_id = f"mem_20260726_{n:020x}"
        memory = full_memory(id=memory_id, title=f"{word} title", body=f"{word} body {word}")
        directory = self.root / "notes" / sub if sub else self.root / "notes"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{memory_id}.md"
        path.write_text(serialize_memory_document(memory), encoding="utf-8")
        return path

    def outcome(self, service: VaultService | None = None) -> tuple[object, object]:
        service = service or self.service
        return service.search(" ".join(WORDS[:3]), limit=100), service.doctor()

    def fresh(self) -> tuple[object, object]:
        return self.outcome(VaultService(self.backend, cwd=self.repo, env=self.env, cache_dir=None))


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """One entry per walk of the project scope by ``FilesStore.scan``; every stamp trusted."""
    monkeypatch.setattr(files_backend, "RACY_WINDOW_NS", -(10**12))
    seen: list[str] = []
    original = files_backend.FilesStore.scan

    def counting(self, scope, remaining):
        if scope == "project":  # the only scope with a root here: the others cost one open
            seen.append(scope)
        return original(self, scope, remaining)

    monkeypatch.setattr(files_backend.FilesStore, "scan", counting)
    return seen


def start_watcher(cache: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "ecc.runtime.treewatch", str(cache)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_socket(cache, process)
    return process


def wait_for_socket(cache: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(str(watchclient.socket_path(cache)))
            return
        except OSError:
            time.sleep(0.02)
        finally:
            probe.close()
    raise AssertionError("the watcher never listened")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(tmp_path)


@pytest.fixture
def watcher(vault: Vault) -> Iterator[subprocess.Popen]:
    process = start_watcher(vault.cache)
    yield process
    stop(process)


def test_an_unchanged_watched_vault_is_not_walked_again(vault, watcher, walks) -> None:
    vault.write(1, "alpha")
    first = vault.outcome()
    assert len(walks) == 1  # the search walked and settled the index; the doctor did not walk
    assert vault.outcome() == first
    assert len(walks) == 1
    assert vault.fresh() == first
    assert len(walks) == 3  # the fresh service (no cache) walks for search and for doctor


def test_without_a_watcher_every_search_walks(vault, walks) -> None:
    vault.write(1, "alpha")
    vault.outcome()
    vault.outcome()
    assert len(walks) == 4


def _hand_changes(vault: Vault) -> list[tuple[str, object]]:
    notes = vault.root / "notes"
    first = vault.write(1, "alpha")
    deep = vault.write(2, "bravo", "deep/er/still")

    def edit_in_place_keeping_size_and_mtime(path: Path = first) -> None:
        info = path.stat()
        text = path.read_text(encoding="utf-8")
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(text.replace("alpha body", "delta body"))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))

    def append_by_hand() -> None:
        with open(deep, "a", encoding="utf-8") as handle:
            handle.write("gamma\n")

    def rename_directory() -> None:
        (notes / "deep").rename(notes / "moved")

    def chmod_unreadable() -> None:
        first.chmod(0o200)

    def restore_old_mtime() -> None:
        info = first.stat()
        first.write_text(first.read_text(encoding="utf-8").replace("title", "tittle"))
        os.utime(first, ns=(info.st_atime_ns, info.st_mtime_ns))

    def new_tree_filled_at_once() -> None:
        vault.write(3, "gamma", "a/b/c/d/e")

    return [
        ("create", lambda: vault.write(4, "alpha")),
        ("create deep", new_tree_filled_at_once),
        ("remove", lambda: deep.unlink()),
        ("edit in place", edit_in_place_keeping_size_and_mtime),
        ("append", append_by_hand),
        ("rename file", lambda: first.rename(notes / "mem_20260726_00000000000000000009.md")),
        ("rename directory", rename_directory),
        ("remove directory", lambda: shutil.rmtree(notes / "deep")),
        ("chmod", chmod_unreadable),
        ("mtime restored", restore_old_mtime),
        ("symlink", lambda: (notes / "link.md").symlink_to(first)),
        ("temp file", lambda: (notes / f"{TEMP_NAME_PREFIX}1-{'0' * 16}.tmp").write_text("x")),
    ]


CHANGES = [
    "create",
    "create deep",
    "remove",
    "edit in place",
    "append",
    "rename file",
    "rename directory",
    "remove directory",
    "chmod",
    "mtime restored",
    "symlink",
    "temp file",
]


@pytest.mark.parametrize("change", CHANGES)
def test_every_hand_change_is_seen_by_the_next_search(vault, watcher, walks, change) -> None:
    changes = dict(_hand_changes(vault))
    vault.outcome()
    settled = vault.outcome()
    walked = len(walks)
    changes[change]()
    assert vault.outcome() == vault.fresh()
    assert len(walks) >= walked + 3  # the warm service walked again, not only the fresh one
    assert vault.outcome() == vault.fresh()
    if change != "chmod":  # root reads a file whatever its mode
        assert vault.outcome() != settled


def test_a_restarted_watcher_is_not_trusted(vault, walks) -> None:
    path = vault.write(1, "alpha")
    first = start_watcher(vault.cache)
    try:
        vault.outcome()
        vault.outcome()
    finally:
        stop(first)
    path.write_text(path.read_text(encoding="utf-8").replace("alpha body", "omega body"))
    second = start_watcher(vault.cache)
    try:
        assert vault.outcome() == vault.fresh()
        assert "omega" in json.dumps(vault.outcome())
    finally:
        stop(second)


def test_a_queue_overflow_means_a_walk(vault, watcher, walks) -> None:
    path = vault.write(1, "alpha")
    other = vault.write(2, "bravo")
    vault.outcome()
    vault.outcome()
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    watcher.send_signal(signal.SIGSTOP)
    try:
        for step in range(limit // 2 + 64):  # alternating names: the kernel merges no two
            os.utime(path, ns=(step, step))
            os.utime(other, ns=(step, step))
        path.write_text(path.read_text(encoding="utf-8").replace("alpha body", "sigma body"))
    finally:
        watcher.send_signal(signal.SIGCONT)
    assert vault.outcome() == vault.fresh()
    assert "sigma body" in json.dumps(vault.outcome())


def _serve_lies(path: Path, reply: bytes, stopping: threading.Event) -> threading.Thread:
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(0.1)

    def run() -> None:
        with listener:
            while not stopping.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.recv(65536)
                    conn.sendall(reply)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "reply",
    [
        b"garbage\n",
        b'{"v": 1, "roots": [["e", "x", 1, 2]]}\n',
        b'{"v": 1, "roots": [["e", 1, 1, 2]]}\n',  # well formed, but not this root's identity
        b"",
    ],
)
def test_a_foreign_or_corrupt_reply_means_a_walk(vault, walks, reply) -> None:
    path = vault.write(1, "alpha")
    vault.outcome()
    watchclient.socket_path(vault.cache).parent.mkdir(parents=True, exist_ok=True)
    stopping = threading.Event()
    thread = _serve_lies(watchclient.socket_path(vault.cache), reply, stopping)
    try:
        vault.outcome()
        path.write_text(path.read_text(encoding="utf-8").replace("alpha body", "gamma body"))
        assert vault.outcome() == vault.fresh()
        assert len(walks) == 8  # every search and doctor walked: the replies were not trusted
    finally:
        stopping.set()
        thread.join()


def test_a_stale_socket_file_means_a_walk(vault, walks) -> None:
    vault.write(1, "alpha")
    path = watchclient.socket_path(vault.cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    vault.outcome()
    vault.outcome()
    assert len(walks) == 4


def test_the_daemon_runs_the_watcher(vault, walks, tmp_path: Path) -> None:
    vault.write(1, "alpha")
    env = {**vault.env, "ECC_DATA_DIR": str(tmp_path / "data")}
    daemon = subprocess.Popen(
        [str(Path(sys.executable).with_name("ecc")), "daemon", "--interval", "5"],
        cwd=vault.repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_socket(vault.cache, daemon)
        vault.outcome()
        settled = vault.outcome()
        assert len(walks) == 1
        vault.write(2, "bravo", "x/y")
        assert vault.outcome() == vault.fresh() != settled
    finally:
        stop(daemon)
    assert daemon.returncode == 0, daemon.stderr.read() if daemon.stderr else ""
    assert not watchclient.socket_path(vault.cache).exists()  # the daemon removed its socket


# -- the differential test: random hand edits through the watched fast path -----------------

_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["create", "create_deep", "remove", "edit", "edit_keep_mtime", "chmod", "mvdir"]
        ),
        st.integers(0, 7),
        st.sampled_from(WORDS),
    ),
    min_size=1,
    max_size=10,
)


@pytest.fixture(scope="module")
def shared_cache() -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="ecc-watched-"))
    process = start_watcher(work / "cache")
    try:
        yield work / "cache"
    finally:
        stop(process)
        shutil.rmtree(work, ignore_errors=True)


def _apply(vault: Vault, paths: dict[int, Path], op: str, n: int, word: str) -> None:
    path = paths.get(n)
    if op.startswith("create") and path is None:
        paths[n] = vault.write(n, word, f"d{n % 3}/e{n}" if op == "create_deep" else "")
    elif path is None:
        return
    elif op == "remove":
        path.unlink()
        del paths[n]
    elif op.startswith("edit"):
        info = path.stat()
        text = path.read_text(encoding="utf-8")
        old = next((w for w in WORDS if f"{w} body" in text), None)
        if old is not None:
            with open(path, "r+", encoding="utf-8") as handle:
                handle.write(text.replace(old, word))
            if op == "edit_keep_mtime":
                os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif op == "chmod":
        path.chmod(0o600 if path.stat().st_mode & 0o044 else 0o644)
    elif op == "mvdir" and path.parent.name.startswith("e"):
        target = path.parent.with_name(f"{path.parent.name}m")
        path.parent.rename(target)
        for key, value in list(paths.items()):
            if value.parent == path.parent:
                paths[key] = target / value.name


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(_OPS, min_size=1, max_size=3))
def test_watched_results_match_a_full_rescan(shared_cache: Path, batches: list) -> None:
    saved_window = files_backend.RACY_WINDOW_NS
    files_backend.RACY_WINDOW_NS = -(10**12)  # every stamp trusted: the watcher must catch all
    work = Path(tempfile.mkdtemp(prefix="ecc-watched-case-"))
    try:
        vault = Vault(work)
        vault.cache = shared_cache
        vault.env["ECC_CACHE_DIR"] = str(shared_cache)
        vault.service = VaultService(
            vault.backend, cwd=vault.repo, env=vault.env, cache_dir=shared_cache
        )
        vault.write(100, "omega")
        paths: dict[int, Path] = {}
        vault.outcome()
        for batch in batches:
            for op, n, word in batch:
                _apply(vault, paths, op, n, word)
            assert vault.outcome() == vault.fresh()
            assert vault.outcome() == vault.fresh()  # and again, through the settled index
    finally:
        files_backend.RACY_WINDOW_NS = saved_window
        shutil.rmtree(work, ignore_errors=True)


def test_doctor_of_an_unchanged_vault_reuses_its_report(
    vault, watcher, walks, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecc.vault.index import ScopeIndex

    vault.write(1, "alpha")
    vault.write(2, "bravo", "deep")
    link_queries: list[str] = []
    original = ScopeIndex.query

    def recording(self, sql, params=()):
        if "links_d" in sql:
            link_queries.append(sql)
        return original(self, sql, params)

    monkeypatch.setattr(ScopeIndex, "query", recording)
    first = vault.service.doctor()
    asked = len(link_queries)
    assert asked > 0
    assert vault.service.doctor() == first
    assert vault.service.doctor(target_harness="codex") != first  # another report: made afresh
    assert len(link_queries) == 2 * asked
    assert vault.service.doctor() == first
    assert len(link_queries) == 2 * asked  # the unchanged vault's report was kept
    vault.write(3, "gamma")
    assert vault.service.doctor() == vault.fresh()[1] != first


@pytest.mark.parametrize(
    "value",
    ['{"token": 1', '["not", "a", "dict"]', '{"token": null, "visited": 1}', "\x00\x01"],
)
def test_a_corrupt_watch_record_in_the_index_means_a_walk(vault, watcher, walks, value) -> None:
    import sqlite3

    from ecc.vault.index import index_path
    from ecc.vault.loading import WATCH_META

    vault.write(1, "alpha")
    settled = vault.outcome()
    key = f"files\x00{vault.root}"
    db = sqlite3.connect(index_path(vault.cache, key))
    try:
        found = db.execute("SELECT count(*) FROM meta WHERE key = ?", (WATCH_META,)).fetchone()
        assert found == (1,)
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, WATCH_META))
        db.commit()
    finally:
        db.close()
    walked = len(walks)
    assert vault.outcome() == settled == vault.fresh()
    assert len(walks) == walked + 1 + 2  # the warm search walked (and settled again), then fresh


@pytest.mark.parametrize("limit", range(1, 9))
def test_the_entry_budget_cuts_a_watched_load_as_it_cuts_a_walk(
    vault, watcher, walks, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    from ecc.vault import loading

    for n in range(3):
        vault.write(n, WORDS[n], "deep" if n == 2 else "")
    vault.outcome()  # settled under the watcher's token with the whole budget
    monkeypatch.setattr(loading, "MAX_FILES", limit)
    assert vault.outcome() == vault.fresh()
    assert vault.outcome() == vault.fresh()
