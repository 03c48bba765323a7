"""``ecc sessions``: a header, a repository column, and ``--repo`` to list one repository's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import run_ecc
from tests.conventions.conftest import wait_finished
from tests.remote.conftest import start_server  # noqa: F401 (the fixture)


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    (path / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "one"], cwd=path, check=True)
    return path


def _start(cwd: Path) -> str:
    session_id = run_ecc("start", "--no-worktree", "--harness", "shell", "true", cwd=cwd)
    assert session_id.returncode == 0, session_id.stderr
    wait_finished(session_id.stdout.strip(), cwd)
    return session_id.stdout.strip()


def test_header_repository_column_and_filter(tmp_path: Path):
    first, second = _repo(tmp_path / "alpha"), _repo(tmp_path / "beta")
    in_first, in_second = _start(first), _start(second)

    listing = run_ecc("sessions", "--all", cwd=first)
    assert listing.returncode == 0, listing.stderr
    header, *rows = listing.stdout.splitlines()
    assert header.split() == ["ID", "STATE", "HARNESS", "AGE", "REPOSITORY", "TASK"]
    by_id = {row.split()[0]: row for row in rows}
    assert set(by_id) == {in_first, in_second}
    assert "alpha" in by_id[in_first] and "beta" in by_id[in_second]

    only = run_ecc("sessions", "--all", "--repo", str(second), cwd=first)
    assert [row.split()[0] for row in only.stdout.splitlines()[1:]] == [in_second]
    here = run_ecc("sessions", "--all", "--repo", ".", cwd=first / ".")
    assert [row.split()[0] for row in here.stdout.splitlines()[1:]] == [in_first]
    as_json = json.loads(run_ecc("sessions", "--all", "--repo", str(first), "--json").stdout)
    assert [s["id"] for s in as_json] == [in_first]


def test_repo_that_is_not_a_directory_is_refused(tmp_path: Path):
    result = run_ecc("sessions", "--repo", str(tmp_path / "missing"))
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_remote_listing_has_the_same_table(start_server, tmp_path: Path):  # noqa: F811
    server = start_server()
    added = run_ecc("remote", "add", "lo", server.url, "--token-file", str(server.token_file))
    assert added.returncode == 0, added.stderr
    started = run_ecc(
        "start", "--remote", "lo", "--harness", "shell", "--no-worktree", "--cwd",
        str(server.root), "true",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    session_id = started.stdout.strip()
    listing = run_ecc("sessions", "--remote", "lo", "--all")
    header, *rows = listing.stdout.splitlines()
    assert header.split() == ["ID", "STATE", "HARNESS", "AGE", "REPOSITORY", "TASK"]
    assert [row.split()[0] for row in rows] == [session_id]
    assert server.root.name in rows[0]
