"""``ecc memory search`` has a click-free hot path (ecc.cli.fast.search): every form prints the same
bytes and exits with the same code as the click command, and the forms it does not handle fall
through to click. (Both print through ``searchcall.render``, which sanitises every line.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.cli.fast import search as searchcall
from tests.conftest import run_ecc

CLICK_ONLY = [sys.executable, "-c", "import sys; from ecc.cli.app import main; main(sys.argv[1:])"]


def _click(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLICK_ONLY, "memory", "search", *args],
        cwd=repo,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def vault(repo: Path, isolated_env: Path) -> Path:
    for n, (title, body, kind) in enumerate(
        [
            ("Auth migration", "The migration tests pass; rollout pending.", "note"),
            ("Rollout plan", "Roll out the auth change on Monday.", "decision"),
            ("Team lint rules", "Lint with ruff; a migration of config is due.", "lesson"),
        ]
    ):
        out = run_ecc(
            "memory", "save", "--title", title, "--stdin", "--kind", kind,
            "--scope", "team" if n == 2 else "project", "--target", "codex" if n else "all",
            cwd=repo, input=body,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
    return repo


FORMS = [
    ["migration"],
    ["auth", "migration"],
    ["--json", "rollout"],
    ["rollout", "--json"],
    ["--scope", "team", "migration"],
    ["--scope=project", "--scope", "team", "--kind", "note", "migration"],
    ["--target-harness", "claude", "rollout"],
    ["--target-harness=codex", "--json", "auth"],
    ["--limit", "1", "migration"],
    ["--limit=2", "--json", "migration"],
    ["--", "--json", "migration"],
    ["-", "migration"],
    [],
    ["nothing-matches-this"],
    # errors the service reports, and forms left to click
    ["--limit", "0", "auth"],
    ["--limit", "x", "auth"],
    ["--scope", "galaxy", "auth"],
    ["--kind", "poem", "auth"],
    ["--target-harness", "Not A Slug", "auth"],
    ["--help"],
    ["-h"],
    ["--trust", "verified", "auth"],
    ["--limit"],
    ["--scope", "--json"],
    ["--json=1", "auth"],
]


@pytest.mark.parametrize("form", FORMS, ids=lambda form: " ".join(form) or "(none)")
def test_fast_path_prints_what_click_prints(vault: Path, form: list[str]) -> None:
    fast = run_ecc("memory", "search", *form, cwd=vault)
    slow = _click(vault, *form)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )


def test_fast_path_takes_the_plain_forms_only() -> None:
    assert searchcall.parse(["a", "--scope=team", "--kind", "note", "--limit", "3", "b"]) == {
        "query": ["a", "b"],
        "scopes": ["team"],
        "kinds": ["note"],
        "target_harness": None,
        "limit": 3,
        "semantic": False,
        "as_json": False,
    }
    assert searchcall.parse(["--", "--json"])["query"] == ["--json"]
    for form in (["--help"], ["-h"], ["--limit"], ["--limit", "x"], ["--kind", "-x"], ["-x"]):
        assert searchcall.parse(form) is None, form


def test_plain_search_imports_neither_click_nor_the_plugin_manager(vault: Path) -> None:
    """The files backend is reached through its hook without pluggy (nor inspect and typing,
    which pluggy imports): ``ecc.runtime.plugins.sole.call_sole``."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ecc", "memory", "search", "--json", "auth"],
        cwd=vault,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and '"results"' in out.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "ecc.cli.fast.search" in imported and "ecc.contract.hookspecs" in imported
    assert not imported & {"click", "pluggy", "inspect", "typing"}
    assert "ecc.vault.rerank" not in imported  # no ranker asked for: the exact search alone


def test_fast_path_closed_stdout_ends_quietly(vault: Path) -> None:
    """`ecc memory search … | head -0`: no traceback, status 1 (as click)."""
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as closed:
        out = subprocess.run(
            [sys.executable, "-m", "ecc", "memory", "search", "migration"],
            cwd=vault,
            stdout=closed,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert out.returncode == 1 and "Traceback" not in out.stderr
