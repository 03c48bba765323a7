"""``--body-file`` reads only what the user plainly means to share.

A file inside the current repository (or the working directory's tree) or under the home
directory is read; anything else (``/etc/passwd``, another user's tree, a path that reaches
outside through a symlinked directory) and the well-known secret stores under home are refused
with one line that points at ``--stdin``, and nothing is written to the vault.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_ecc


def _save(cwd: Path, body_file: str | Path, *extra: str):
    return run_ecc(
        "memory", "save", "--title", "Body file", "--body-file", str(body_file), *extra, cwd=cwd
    )


def _refused(result, repo: Path) -> None:
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "--stdin" in lines[0]
    assert not (repo / ".ecc").exists()  # nothing written, not even the vault directories


def _saved_body(result, repo: Path) -> str:
    assert result.returncode == 0, result.stderr
    memory_id = json.loads(result.stdout)["memory"]["id"]
    read = run_ecc("memory", "read", memory_id, "--json", cwd=repo)
    return str(json.loads(read.stdout)["memory"]["body"])


def test_system_files_are_refused(repo: Path) -> None:
    present = [p for p in ("/etc/passwd", "/etc/shadow", "/proc/self/environ") if os.path.exists(p)]
    assert "/etc/passwd" in present
    for system_file in present:  # /etc/shadow is readable here: the tests run as root
        result = _save(repo, system_file)
        _refused(result, repo)
        assert "outside this repository and your home directory" in result.stderr


def test_files_outside_the_repository_and_home_are_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    note = outside / "notes.md"
    note.write_text("somebody else's notes\n")
    result = _save(repo, note)
    _refused(result, repo)
    assert str(note) in result.stderr
    # The same through a relative path, and for a handoff.
    _refused(_save(repo, "../elsewhere/notes.md"), repo)
    handoff = run_ecc(
        "memory", "handoff", "--from", "codex", "--target", "claude", "--title", "t",
        "--body-file", str(note), cwd=repo,
    )  # fmt: skip
    _refused(handoff, repo)
    # Piping it is the deliberate way, and works.
    piped = run_ecc(
        "memory", "save", "--title", "Piped", "--stdin", "--json", cwd=repo, input=note.read_text()
    )
    assert piped.returncode == 0, piped.stderr


def test_a_symlinked_directory_cannot_reach_outside(
    repo: Path, tmp_path: Path, isolated_env: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.md").write_text("not yours\n")
    (repo / "docs").symlink_to(outside)
    _refused(_save(repo, repo / "docs" / "notes.md"), repo)
    (isolated_env / "etc").symlink_to("/etc")
    _refused(_save(repo, isolated_env / "etc" / "passwd"), repo)


@pytest.mark.parametrize(
    "secret",
    [
        ".ssh/config",
        ".gnupg/gpg.conf",
        ".aws/config",
        ".kube/config",
        ".docker/config.json",
        ".config/gh/hosts.yml",
        ".netrc",
        ".pgpass",
        ".git-credentials",
    ],
)
def test_secret_stores_under_home_are_refused(repo: Path, isolated_env: Path, secret: str) -> None:
    path = isolated_env / secret
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("harmless looking text\n")
    _refused(_save(repo, path), repo)


def test_ecc_config_dir_is_refused(repo: Path) -> None:
    token = Path(os.environ["ECC_CONFIG_DIR"]) / "remote-token"
    token.parent.mkdir(parents=True)
    token.write_text("0123456789abcdef0123456789abcdef\n")
    _refused(_save(repo, token), repo)


def test_files_in_the_repository_and_home_are_accepted(repo: Path, isolated_env: Path) -> None:
    docs = repo / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text("the plan\n")
    assert _saved_body(_save(repo, docs / "plan.md", "--json"), repo) == "the plan"
    # Relative to a subdirectory, still inside the repository.
    sub = repo / "src"
    sub.mkdir()
    assert _saved_body(_save(sub, "../docs/plan.md", "--json"), repo) == "the plan"
    notes = isolated_env / "notes" / "today.md"
    notes.parent.mkdir()
    notes.write_text("home notes\n")
    assert _saved_body(_save(repo, notes, "--json"), repo) == "home notes"


def test_special_files_are_refused_without_blocking(repo: Path) -> None:
    fifo = repo / "pipe"
    os.mkfifo(fifo)
    result = _save(repo, fifo)  # a FIFO with no writer would block a plain open()
    assert result.returncode == 1 and "regular" in result.stderr
    assert not (repo / ".ecc").exists()
