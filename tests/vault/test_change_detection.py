"""Every change to the vault is seen by a warm (cached) search and doctor.

The index trusts a file's stamp (device, inode, size, mtime, ctime). A file changed less than
the timestamp granularity before the scan gets no stamp, so an edit landing in the same clock
tick as the scan's stat, with the same size, is still read. The differential test compares the
cached path with a rescan from nothing after random creates, removes and in-place edits.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ecc_plugins.files_backend as files_backend
from ecc.vault.backend import load_backend
from ecc.vault.format import serialize_memory_document
from ecc.vault.loading import listing_digest
from ecc.vault.roots import resolve_vault_roots
from ecc.vault.service import VaultService
from tests.conftest import git
from tests.vault.conftest import full_memory

WORDS = ["alpha", "bravo", "delta", "gamma", "omega", "sigma"]  # all five letters long


def _write(root: Path, n: int, word: str, sub: str = "") -> Path:
    memory_id = f"mem_20260726_{n:020x}"
    memory = full_memory(id=memory_id, title=f"{word} title", body=f"{word} body {word}")
    directory = root / "notes" / sub if sub else root / "notes"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{memory_id}.md"
    path.write_text(serialize_memory_document(memory), encoding="utf-8")
    return path


def _edit_same_size(path: Path, old: str, new: str, keep_mtime: bool) -> None:
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as handle:  # in place: same inode, same size
        handle.write(text.replace(old, new))
    if keep_mtime:
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def _outcome(service: VaultService) -> tuple[object, object]:
    search = service.search(" ".join(WORDS[:3]), limit=100)
    return search, service.doctor()


def test_a_file_changed_just_now_gets_no_trusted_stamp(repo: Path, isolated_env: Path) -> None:
    root = repo / ".ecc/memory/project"
    _write(root, 1, "alpha")
    store = files_backend.FilesStore(resolve_vault_roots(repo, None, dict(os.environ)))
    try:
        documents = store.scan("project", 1000).documents
    finally:
        store.close()
    assert [tuple(doc) for doc in documents] == [("notes/mem_20260726_00000000000000000001.md", "")]


def test_an_old_file_keeps_its_stamp(
    repo: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_backend, "RACY_WINDOW_NS", -(10**12))  # as if the scan ran later
    root = repo / ".ecc/memory/project"
    path = _write(root, 1, "alpha")
    store = files_backend.FilesStore(resolve_vault_roots(repo, None, dict(os.environ)))
    try:
        ((_rel, stamp),) = store.scan("project", 1000).documents
    finally:
        store.close()
    info = path.stat()
    assert stamp == (
        f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    )


def test_a_recent_file_is_read_again_and_not_settled(make_service, repo: Path) -> None:
    """An in-place edit keeping size and mtime right after a search is seen by the next one."""
    service = make_service()
    root = repo / ".ecc/memory/project"
    path = _write(root, 1, "alpha")
    assert [hit["memory"]["id"] for hit in service.search("alpha")["results"]]
    _edit_same_size(path, "alpha", "bravo", keep_mtime=True)
    assert service.search("alpha")["results"] == []
    assert len(service.search("bravo")["results"]) == 1


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "create_deep", "remove", "edit", "edit_keep_mtime"]),
        st.integers(0, 7),
        st.sampled_from(WORDS),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(_OPS, min_size=1, max_size=3), racy=st.booleans())
def test_cached_results_match_a_full_rescan(batches: list, racy: bool) -> None:
    work = Path(tempfile.mkdtemp(prefix="ecc-change-"))
    saved_window = files_backend.RACY_WINDOW_NS
    # racy=False trusts every stamp at once, as for files older than the window: the stamps,
    # directory listings and scan digest alone must then catch each change.
    files_backend.RACY_WINDOW_NS = saved_window if racy else -(10**12)
    try:
        repo = work / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        env = {**os.environ, "HOME": str(work), "ECC_CACHE_DIR": str(work / "cache")}
        for name in ("ECC_CONFIG_DIR", "ECC_STATE_DIR", "ECC_DATA_DIR"):
            env[name] = str(work / name.lower())
        backend = load_backend("files")
        cached = VaultService(backend, cwd=repo, env=env, cache_dir=work / "cache")
        root = repo / ".ecc/memory/project"
        _write(root, 100, "omega")
        paths: dict[int, Path] = {}
        _outcome(cached)  # warm the index
        for batch in batches:
            for op, n, word in batch:
                path = paths.get(n)
                if op.startswith("create") and path is None:
                    paths[n] = _write(root, n, word, "deep/er" if op == "create_deep" else "")
                elif op == "remove" and path is not None:
                    path.unlink()
                    del paths[n]
                elif op.startswith("edit") and path is not None:
                    text = path.read_text(encoding="utf-8")
                    old = next((w for w in WORDS if f"{w} body" in text), None)
                    if old is not None:
                        _edit_same_size(path, old, word, keep_mtime=op == "edit_keep_mtime")
            fresh = VaultService(backend, cwd=repo, env=env, cache_dir=None)
            assert _outcome(cached) == _outcome(fresh)
            assert _outcome(cached) == _outcome(fresh)  # and again, from the settled index
    finally:
        files_backend.RACY_WINDOW_NS = saved_window
        shutil.rmtree(work, ignore_errors=True)


def test_doctor_lists_duplicates_and_broken_links_in_load_order(make_service, repo: Path) -> None:
    base = repo / ".ecc/memory"
    first, second = "mem_20260726_00000000000000000002", "mem_20260726_00000000000000000001"
    missing = "mem_20260726_00000000000000000009"
    for scope in ("project", "team"):
        for memory_id, links, harness in ((first, [missing], "claude"), (second, [], "codex")):
            memory = full_memory(id=memory_id, scope=scope, links=links, targetHarnesses=[harness])
            path = base / scope / "notes" / f"{memory_id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(serialize_memory_document(memory), encoding="utf-8")
    report = make_service().doctor()
    assert report["memoryCount"] == 4
    assert report["duplicateIds"] == [
        {"id": second, "paths": [f"{scope}:notes/{second}.md" for scope in ("project", "team")]},
        {"id": first, "paths": [f"{scope}:notes/{first}.md" for scope in ("project", "team")]},
    ]
    assert report["brokenLinks"] == [
        {"sourceId": first, "targetId": missing, "path": f"{scope}:notes/{first}.md"}
        for scope in ("project", "team")
    ]
    codex = make_service().doctor(target_harness="codex")
    assert (codex["memoryCount"], codex["brokenLinkCount"]) == (2, 0)
    assert [item["id"] for item in codex["duplicateIds"]] == [second]


def _project_index(isolated_env: Path) -> Path:
    for path in (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3"):
        db = sqlite3.connect(path)
        try:
            (root,) = db.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        finally:
            db.close()
        if root.endswith("/.ecc/memory/project"):
            return path
    raise AssertionError("no index of the project scope")


def _meta_scan(isolated_env: Path) -> object:
    db = sqlite3.connect(_project_index(isolated_env))
    try:
        return db.execute("SELECT value FROM meta WHERE key = 'scan'").fetchone()[0]
    finally:
        db.close()


def test_the_index_keeps_the_listings_digest_and_settles_an_older_index_without_reading(
    make_service, repo: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settled listing (every rel and stamp) is kept as its digest, not whole; an index
    that kept it whole (before) is settled again from its rows, reading no file."""
    monkeypatch.setattr(files_backend, "RACY_WINDOW_NS", -(10**12))  # stamps to trust
    root = repo / ".ecc/memory/project"
    for n, word in enumerate(WORDS):
        _write(root, n, word)
    expected = _outcome(make_service())
    store = files_backend.FilesStore(resolve_vault_roots(repo, None, dict(os.environ)))
    try:
        listing = "\n".join(map("\t".join, store.scan("project", 1000).documents))
    finally:
        store.close()
    assert listing.count("\t") == len(WORDS)
    assert _meta_scan(isolated_env) == listing_digest(listing)
    assert len(listing_digest(listing)) == 40
    db = sqlite3.connect(_project_index(isolated_env))
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'scan'", (listing,))
    db.close()
    reads: list[str] = []
    real_read = files_backend.FilesStore.read

    def counting(self, scope: str, rel: str, max_bytes: int) -> str:
        reads.append(rel)
        return real_read(self, scope, rel, max_bytes)

    monkeypatch.setattr(files_backend.FilesStore, "read", counting)
    assert _outcome(make_service()) == expected
    assert reads == []
    assert _meta_scan(isolated_env) == listing_digest(listing)
