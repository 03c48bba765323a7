"""Vault service on the real files backend (checklist 8.1 #1-6, #20-28, #38-41, #51-64)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from ecc.contract.errors import EccError
from ecc.vault import index as index_module
from ecc.vault import loading as loading_module
from ecc.vault.format import serialize_memory_document
from ecc.vault.roots import require_roots, resolve_vault_roots
from tests.conftest import git
from tests.vault.conftest import full_memory, memory_input


def test_roots_from_nested_cwd(repo: Path, isolated_env: Path) -> None:
    """8.1 #1: nearest .git ancestor is the project root; user vault under home."""
    nested = repo / "a" / "b"
    nested.mkdir(parents=True)
    roots = resolve_vault_roots(nested, isolated_env, {})
    assert roots.project == repo / ".ecc/memory/project"
    assert roots.team == repo / ".ecc/memory/team"
    assert roots.user == isolated_env / ".ecc/memory"


def test_roots_without_git_and_with_overrides(tmp_path: Path) -> None:
    """8.1 #2: no .git -> cwd is the project; #3: env overrides."""
    plain = tmp_path / "plain"
    plain.mkdir()
    roots = resolve_vault_roots(plain, tmp_path, {})
    assert roots.project == plain / ".ecc/memory/project"
    env = {
        "ECC_MEMORY_PROJECT_ROOT": str(tmp_path / "X"),
        "ECC_MEMORY_USER_ROOT": str(tmp_path / "Y"),
    }
    roots = resolve_vault_roots(plain, tmp_path, env)
    assert (roots.project, roots.team, roots.user) == (
        tmp_path / "X/project",
        tmp_path / "X/team",
        tmp_path / "Y",
    )
    with pytest.raises(EccError, match="memory root override must be a non-empty string"):
        resolve_vault_roots(plain, tmp_path, {"ECC_MEMORY_USER_ROOT": "   "})


def test_init(service, repo: Path, isolated_env: Path) -> None:
    """8.1 #4 eight kind dirs per scope; #5 no database files; #6 exact project .gitignore."""
    result = service.init(["project", "user"])
    assert result["scopes"] == ["project", "user"]
    kinds = [
        "contexts",
        "decisions",
        "facts",
        "handoffs",
        "lessons",
        "notes",
        "preferences",
        "runbooks",
    ]
    for root in (repo / ".ecc/memory/project", isolated_env / ".ecc/memory"):
        assert all((root / kind).is_dir() for kind in kinds)
        assert oct(root.stat().st_mode & 0o777) == "0o700"
    assert oct((repo / ".ecc").stat().st_mode & 0o777) == "0o700"  # every level created 0700
    assert not list(repo.rglob("*.db")) and not list(repo.rglob("*.sqlite*"))
    assert (repo / ".ecc/memory/project/.gitignore").read_bytes() == b"*\n!.gitignore\n"
    assert not (isolated_env / ".ecc/memory/.gitignore").exists()
    assert service.init(["project", "user"]) == result  # idempotent


def test_save_and_read_back(service, repo: Path) -> None:
    """8.1 #20 unreviewed active handoff at handoffs/<id>.md; #21 file parses to the result."""
    saved = service.save(memory_input(kind="handoff"))
    memory = saved["memory"]
    assert (memory["trust"], memory["status"]) == ("unreviewed", "active")
    path = repo / ".ecc/memory/project/handoffs" / f"{memory['id']}.md"
    assert Path(saved["file"]) == path
    assert saved["path"] == f"project:handoffs/{memory['id']}.md"
    assert path.read_text() == serialize_memory_document(memory)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert service.read(memory["id"])["memory"] == memory


def test_create_only_same_id(service) -> None:
    """8.1 #22: second save with the same id fails; the first stays unchanged."""
    first = service.save(memory_input(id="mem_fixed_id"))
    with pytest.raises(EccError, match="already exists; writes are create-only"):
        service.save(memory_input(id="mem_fixed_id", title="Other", body="Other body"))
    read = service.read("mem_fixed_id")["memory"]
    assert (read["title"], read["body"]) == (first["memory"]["title"], first["memory"]["body"])


def test_symlink_at_destination_not_followed(service, repo: Path, tmp_path: Path) -> None:
    """8.1 #23."""
    service.init(["project"])
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    link = repo / ".ecc/memory/project/notes/mem_fixed_id.md"
    link.symlink_to(victim)
    with pytest.raises(EccError, match=r"already exists|create-only|outside|Refusing"):
        service.save(memory_input(id="mem_fixed_id"))
    assert victim.read_text() == "keep" and link.is_symlink()


@pytest.mark.parametrize("content", [b"", b"*\n", b"*\n!.gitignore\n# more\n"])
def test_altered_gitignore_fails_closed(service, repo: Path, content: bytes) -> None:
    """8.1 #24: a pre-seeded wrong .gitignore refuses the save; nothing is written."""
    root = repo / ".ecc/memory/project"
    root.mkdir(parents=True)
    (root / ".gitignore").write_bytes(content)
    with pytest.raises(EccError, match=r"gitignore.*fail-closed"):
        service.save(memory_input())
    assert sorted(p.name for p in root.iterdir()) == [".gitignore"]
    assert (root / ".gitignore").read_bytes() == content


def test_saved_memory_is_git_ignored(service, repo: Path) -> None:
    """8.1 #25."""
    saved = service.save(memory_input())
    subprocess.run(["git", "check-ignore", "-q", saved["file"]], cwd=repo, check=True)
    assert saved["memory"]["id"] not in git(repo, "status", "--porcelain", "--untracked-files=all")


def test_symlinked_ecc_outside_refused(service, repo: Path, tmp_path: Path) -> None:
    """8.1 #26: .ecc -> outside the project: refused, nothing created outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".ecc").symlink_to(outside)
    with pytest.raises(EccError, match="symlink"):
        service.save(memory_input())
    assert list(outside.iterdir()) == []


def test_swapped_to_symlink_after_init(service, repo: Path, tmp_path: Path) -> None:
    """8.1 #27: .ecc replaced by an outside symlink after init; reused roots refuse."""
    service.init(["project"])
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(repo / ".ecc")
    (repo / ".ecc").symlink_to(outside)
    with pytest.raises(EccError, match=r"symlink|outside|trusted"):
        service.save(memory_input())
    assert list(outside.iterdir()) == []


def test_roots_without_boundary_refused(repo: Path) -> None:
    """8.1 #28: a plain mapping of roots carries no trusted boundary."""
    with pytest.raises(EccError, match=r"boundary policy|trusted boundary"):
        require_roots({"project": repo, "team": repo, "user": repo}, "project")


def test_symlinked_root_and_kind_dir_refused(service, repo: Path, tmp_path: Path) -> None:
    """§2.3: a scope root that is a symlink, or a symlinked kind directory, refuses writes."""
    service.init(["team"])
    notes = repo / ".ecc/memory/team/notes"
    notes.rmdir()
    inside = repo / ".ecc/memory/team/elsewhere"
    inside.mkdir()
    notes.symlink_to(inside)
    with pytest.raises(EccError, match="symlink directory"):
        service.save(memory_input(scope="team"))
    assert list(inside.iterdir()) == []
    outside_scope = repo / "elsewhere"
    outside_scope.mkdir()
    with pytest.raises(EccError, match="outside the install root"):
        notes.unlink()
        notes.symlink_to(outside_scope)
        service.save(memory_input(scope="team"))
    shutil.rmtree(repo / ".ecc/memory/team")
    inside = outside_scope
    (repo / ".ecc/memory/team").symlink_to(inside)
    with pytest.raises(EccError, match="symlink root"):
        service.save(memory_input(scope="team"))


def test_secret_refused_nothing_written(service, repo: Path) -> None:
    """8.1 #33 secret in body; #35 a ghp_ token as a tag."""
    with pytest.raises(EccError, match="suspected secret"):
        service.save(memory_input(body="key sk-" + "a1" * 12))
    with pytest.raises(EccError, match=r"suspected secret \(GitHub token\)"):
        service.save(memory_input(tags=["ghp_" + "a" * 20]))
    assert not (repo / ".ecc").exists()


def write_doc(repo: Path, rel: str, **overrides) -> Path:
    path = repo / ".ecc/memory" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(serialize_memory_document(full_memory(**overrides)))
    return path


def test_quarantine_and_location(service, repo: Path) -> None:
    """8.1 #38 npm token on disk quarantined; #39 location mismatch; #40 no token; #41 not found."""
    token = "npm_" + "Z" * 24
    write_doc(repo, "project/notes/mem_secret_doc.md", id="mem_secret_doc", body=f"x\n{token}")
    write_doc(repo, "project/notes/mem_wrong_kind.md", id="mem_wrong_kind", kind="decision")
    report = service.doctor()
    assert report["invalidFileCount"] == 2
    assert sorted(item["code"] for item in report["invalidFiles"]) == [
        "location-mismatch",
        "suspected-secret",
    ]
    assert token not in repr(report)
    with pytest.raises(EccError, match="was not found"):
        service.read("mem_secret_doc")


def test_file_name_must_match_id(service, repo: Path) -> None:
    """§9.3 fix: a copied file under another name is a location mismatch, not a duplicate."""
    original = write_doc(repo, "project/notes/mem_one_doc.md", id="mem_one_doc")
    shutil.copy(original, original.with_name("copy.md"))
    report = service.doctor()
    assert report["duplicateIdCount"] == 0
    assert report["invalidFiles"] == [
        {
            "path": "project:notes/copy.md",
            "code": "location-mismatch",
            "message": "Memory metadata does not match its vault location.",
        }
    ]
    assert service.read("mem_one_doc")["memory"]["id"] == "mem_one_doc"


def test_user_scope_explicit(service) -> None:
    """8.1 #51."""
    saved = service.save(memory_input(scope="user"))
    with pytest.raises(EccError, match="was not found"):
        service.read(saved["memory"]["id"])
    assert service.read(saved["memory"]["id"], scopes=["user"])["memory"]["scope"] == "user"


def test_search_rank_filters(service) -> None:
    """8.1 #52 title+tag above body-only, superseded excluded; #53 no body; #54 target filter."""
    strong = service.save(memory_input(title="Auth rollout", tags=["auth"], body="Nothing here."))
    weak = service.save(memory_input(title="Other", body="We talked about auth rollout."))
    service.save(memory_input(title="Auth old", body="auth", id="mem_old_one"))
    write_doc(
        Path(service.cwd),
        "project/notes/mem_superseded.md",
        id="mem_superseded",
        title="Auth superseded",
        status="superseded",
    )
    hidden = service.save(memory_input(title="Auth hidden", targetHarnesses=["hermes"]))
    result = service.search("auth", target_harness="claude")
    ids = [item["memory"]["id"] for item in result["results"]]
    assert ids[0] == strong["memory"]["id"]
    assert weak["memory"]["id"] in ids and "mem_superseded" not in ids
    assert hidden["memory"]["id"] not in ids
    scores = {item["memory"]["id"]: item["score"] for item in result["results"]}
    assert scores[strong["memory"]["id"]] == 20 + 8 + 6 > scores[weak["memory"]["id"]] == 5 + 1
    assert all("body" not in item["memory"] for item in result["results"])
    assert hidden["memory"]["id"] in [r["memory"]["id"] for r in service.search("auth")["results"]]


def test_worked_scoring_example(service) -> None:
    """§4.4: title "Alpha beta", tag beta, body with 9x beta -> 39; ties: newer first, then ID."""
    service.save(memory_input(title="Alpha beta", tags=["beta"], body="beta " * 9))
    assert service.search("beta")["results"][0]["score"] == 39
    service.save(
        memory_input(id="mem_b_tie", title="Tie", body="zeta"),
        now=lambda: "2026-01-01T00:00:00.000Z",
    )
    service.save(
        memory_input(id="mem_a_tie", title="Tie", body="zeta"),
        now=lambda: "2026-01-01T00:00:00.000Z",
    )
    service.save(
        memory_input(id="mem_c_tie", title="Tie", body="zeta"),
        now=lambda: "2026-02-01T00:00:00.000Z",
    )
    ids = [r["memory"]["id"] for r in service.search("zeta")["results"]]
    assert ids == ["mem_c_tie", "mem_a_tie", "mem_b_tie"]
    assert len(service.search("", limit=2)["results"]) == 2


def test_excerpt_centres_on_match(service) -> None:
    body = "filler " * 60 + "needle here " + "tail " * 60
    service.save(memory_input(body=body, title="Excerpt"))
    excerpt = service.search("needle")["results"][0]["excerpt"]
    assert excerpt.startswith("…") and excerpt.endswith("…") and "needle" in excerpt
    assert len(excerpt) == 242


def test_backlinks(service) -> None:
    """8.1 #55: active linking memories only, no body, documents untouched."""
    target = service.save(memory_input(title="Target"))
    tid = target["memory"]["id"]
    linker = service.save(memory_input(title="Linker", links=[tid]))
    write_doc(
        Path(service.cwd),
        "project/notes/mem_rejected_link.md",
        id="mem_rejected_link",
        status="rejected",
        links=[tid],
    )
    before = Path(target["file"]).read_bytes()
    result = service.read(tid)
    assert [b["id"] for b in result["backlinks"]] == [linker["memory"]["id"]]
    assert "body" not in result["backlinks"][0] and result["backlinksTruncated"] is False
    assert Path(target["file"]).read_bytes() == before


def test_doctor_findings(service, repo: Path) -> None:
    """8.1 #56 malformed; #57 secret in malformed doc hidden; #58 duplicates; #59 broken link;
    #60 symlinked .md skipped."""
    root = repo / ".ecc/memory"
    (root / "project/notes").mkdir(parents=True)
    secret = "ghp_" + "Q" * 30
    (root / "project/notes/malformed.md").write_text(f"not a memory {secret}")
    write_doc(repo, "project/facts/mem_dup_one.md", id="mem_dup_one", kind="fact")
    write_doc(repo, "team/facts/mem_dup_one.md", id="mem_dup_one", kind="fact", scope="team")
    write_doc(repo, "project/notes/mem_linker.md", id="mem_linker", links=["mem_missing_one"])
    (root / "project/notes/linked.md").symlink_to(root / "project/notes/mem_linker.md")
    report = service.doctor()
    assert report["ok"] is False
    assert any(item["path"].endswith("malformed.md") for item in report["invalidFiles"])
    assert secret not in repr(report)
    assert report["duplicateIds"][0]["id"] == "mem_dup_one"
    assert report["duplicateIds"][0]["paths"] == [
        "project:facts/mem_dup_one.md",
        "team:facts/mem_dup_one.md",
    ]
    assert report["brokenLinks"][0]["targetId"] == "mem_missing_one"
    assert report["skippedSymlinks"][0].endswith("linked.md")
    with pytest.raises(EccError, match="duplicated in 2 files"):
        service.read("mem_dup_one")


def test_budgets_are_deterministic(service, repo: Path, monkeypatch) -> None:
    """8.1 #61-64 with smaller budgets: entries/bytes truncation and capped diagnostics."""
    notes = repo / ".ecc/memory/project/notes"
    notes.mkdir(parents=True)
    for number in range(120):
        (notes / f"bad{number:03}.md").write_text("junk")
    report = service.doctor()
    assert report["invalidFileCount"] == 120 and len(report["invalidFiles"]) == 100  # #62
    assert report["diagnosticsTruncated"] is True
    monkeypatch.setattr(loading_module, "MAX_FILES", 50)
    report = service.doctor()
    assert report["truncated"] is True and report["invalidFileCount"] == 49  # #61 notes dir counts
    monkeypatch.setattr(loading_module, "MAX_FILES", 1000)
    monkeypatch.setattr(loading_module, "MAX_SCAN_BYTES", 40)
    report = service.doctor()
    assert report["truncated"] is True and report["scannedBytes"] <= 40  # #64
    assert [i["path"] for i in report["invalidFiles"]] == [
        f"project:notes/bad{n:03}.md" for n in range(10)
    ]


def test_broken_link_cap(service, repo: Path) -> None:
    """8.1 #63: 2 docs x 64 missing links -> 128 counted, 100 listed."""
    for n in range(2):
        write_doc(
            repo,
            f"project/notes/mem_src_{n}.md",
            id=f"mem_src_{n}",
            links=[f"mem_gone_{n}_{i:02}" for i in range(64)],
        )
    report = service.doctor()
    assert report["brokenLinkCount"] == 128 and len(report["brokenLinks"]) == 100
    assert report["diagnosticsTruncated"] is True


def test_index_cache_is_disposable(make_service, repo: Path, isolated_env: Path) -> None:
    """Deleting the index cache changes no result; edited files are re-read (stamp check)."""
    service = make_service()
    for n in range(5):
        service.save(memory_input(title=f"Note {n}", body=f"alpha body {n}"))
    first = service.search("alpha body")
    cache = isolated_env / ".cache/ecc/memory-index"
    assert any(cache.iterdir())
    shutil.rmtree(cache)
    assert make_service().search("alpha body") == first
    assert make_service(cache_dir=None).search("alpha body") == first
    # hand edit one file in place: the index notices
    victim = Path(service.save(memory_input(title="Edit me", body="before"))["file"])
    assert service.search("before")["results"]
    victim.write_text(victim.read_text().replace("before", "after!"))
    assert not service.search("before")["results"]
    assert service.search("after")["results"][0]["memory"]["title"] == "Edit me"
    victim.unlink()
    assert not service.search("after")["results"]


def test_corrupt_index_is_rebuilt(make_service, isolated_env: Path) -> None:
    service = make_service()
    service.save(memory_input(title="Survivor"))
    for path in (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3"):
        path.write_bytes(b"this is not sqlite" * 100)
    assert make_service().search("survivor")["results"][0]["memory"]["title"] == "Survivor"


def test_read_only_vault(service, repo: Path) -> None:
    """Bad input: a read-only kind directory gives a clear error and writes nothing."""
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    service.init(["project"])
    notes = repo / ".ecc/memory/project/notes"
    notes.chmod(0o500)
    try:
        with pytest.raises(EccError, match="could not be written"):
            service.save(memory_input())
    finally:
        notes.chmod(0o700)
    assert list(notes.iterdir()) == []


def test_index_of_another_version_is_rebuilt(make_service, isolated_env: Path) -> None:
    """An index written by another ecc version (or another root) is dropped, not misread."""
    service = make_service()
    service.save(memory_input(title="Versioned"))
    assert service.search("versioned")["results"]
    files = list((isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3"))
    assert files
    for path in files:
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = 'ecc-memory-index-0' WHERE key = 'version'")
            db.execute("DELETE FROM packed")  # what an old layout would lack
    assert make_service().search("versioned")["results"][0]["memory"]["title"] == "Versioned"
    for path in files:
        with sqlite3.connect(path) as db:
            version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
        assert version == index_module.INDEX_VERSION
