"""``ecc memory`` command lines read as the reference reads them (issue 23, items 3, 5 and 6).

Option values that look like options, the global ``--dry-run``, ``ecc memory`` alone and
``ecc memory help``, an empty ``--target-harness``, root overrides holding control characters,
duplicate tags, and argv bytes that are not UTF-8 (the reference stores U+FFFD).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ECC, run_ecc


def ecc(repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    return run_ecc("memory", *args, cwd=repo, input=stdin, env=env)


def _memories(repo: Path) -> list[Path]:
    return sorted((repo / ".ecc").rglob("mem_*.md")) if (repo / ".ecc").exists() else []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("save", "--title", "--json", "--stdin"), "--title requires a value."),
        (("save", "--title", "T", "--link", "--tag", "x", "--stdin"), "--link requires a value."),
        (("save", "--title", "T", "--scope", "--stdin"), "--scope requires a value."),
        (("save", "--title", "T", "--stdin", "--tag"), "--tag requires a value."),
        (
            ("save", "--title", "-----BEGIN RSA PRIVATE KEY-----", "--stdin"),
            "--title requires a value.",
        ),
        (("handoff", "--from", "--target", "claude", "--title", "T", "--stdin"), "--from requires"),
        (("search", "--target-harness", "--json"), "--target-harness requires a value."),
        (("search", "x", "--limit", "--json"), "--limit requires a value."),
        (("read", "--scope", "--json"), "--scope requires a value."),
    ],
)
def test_option_values_that_look_like_options_are_missing(
    repo: Path, args: tuple[str, ...], message: str
) -> None:
    out = ecc(repo, *args, stdin="body text\n")
    assert out.returncode != 0
    assert message in out.stderr
    assert out.stderr.count("\n") == 1  # one line
    assert _memories(repo) == []


def test_a_value_with_one_dash_is_a_value(repo: Path) -> None:
    """The reference refuses only values starting with ``--``: ``-x`` is a title."""
    out = ecc(repo, "save", "--title", "-x marks", "--stdin", "--json", stdin="body\n")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["memory"]["title"] == "-x marks"


@pytest.mark.parametrize("command", ["save", "init", "handoff"])
def test_global_dry_run(repo: Path, command: str) -> None:
    args = ["--dry-run", "memory", command]
    if command != "init":
        args += ["--from", "codex", "--target", "claude", "--title", "T", "--stdin"]
    out = run_ecc(*args, cwd=repo, input="body\n")
    assert out.returncode == 1
    assert "dry-run" in out.stderr and "No such option" not in out.stderr
    assert not (repo / ".ecc").exists()


def test_global_dry_run_leaves_reads_alone(repo: Path) -> None:
    out = run_ecc("--dry-run", "memory", "search", "anything", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"] == []


@pytest.mark.parametrize("args", [(), ("help",), ("help", "save")])
def test_bare_memory_and_help_print_usage(repo: Path, args: tuple[str, ...]) -> None:
    out = ecc(repo, *args)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ECC Memory Vault\n")
    assert "Default recall scopes: project and team" in out.stdout
    assert out.stderr == ""


def test_empty_target_harness_is_no_filter(repo: Path) -> None:
    saved = ecc(repo, "save", "--title", "Routing", "--target", "hermes", "--stdin", stdin="b\n")
    assert saved.returncode == 0, saved.stderr
    for extra in ((), ("--", "routing")):
        out = ecc(repo, "search", "--target-harness", "", "--json", *extra)
        assert out.returncode == 0, out.stderr
        assert [r["memory"]["title"] for r in json.loads(out.stdout)["results"]] == ["Routing"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("/tmp/a\x01b", "memory root override must not contain control or bidirectional"),
        ("/tmp/a\u202eb", "memory root override must not contain control or bidirectional"),
        ("   ", "memory root override must be a non-empty string."),
        ("/" + "a" * 4100, "memory root override is too long (maximum 4096 characters)."),
    ],
    ids=["c0", "bidi", "blank", "long"],
)
def test_root_override_checks(repo: Path, value: str, message: str) -> None:
    out = ecc(repo, "search", "x", env={"ECC_MEMORY_PROJECT_ROOT": value})
    assert out.returncode == 1
    assert message in out.stderr


def test_duplicate_tags_report_the_duplicate_first(repo: Path) -> None:
    """The reference checks each value in turn: the repeat is found before a later bad slug."""
    out = ecc(
        repo, "save", "--title", "T", "--tag", "auth", "--tag", "auth", "--tag", "Bad",
        "--stdin", stdin="b\n",
    )  # fmt: skip
    assert out.returncode == 1
    assert "tags must not contain duplicate values." in out.stderr
    out = ecc(
        repo, "save", "--title", "T", "--target", "claude", "--target", "claude",
        "--target", "Bad", "--stdin", stdin="b\n",
    )  # fmt: skip
    assert "target harnesses must not contain duplicate values." in out.stderr


def test_invalid_utf8_in_a_title_is_stored_as_replacement_character(repo: Path) -> None:
    """Node decodes argv with U+FFFD for each bad sequence; so does ecc (not "control")."""
    env = dict(os.environ)
    out = subprocess.run(
        [*map(os.fsencode, ECC), b"memory", b"save", b"--title", b"caf\xe9 \xff\xfe!",
         b"--stdin", b"--json"],
        cwd=repo, input=b"body\n", env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    memory = json.loads(out.stdout)["memory"]
    assert memory["title"] == "caf\ufffd \ufffd\ufffd!"
    (path,) = _memories(repo)
    assert 'title: "caf\ufffd \ufffd\ufffd!"' in path.read_text(encoding="utf-8")
    found = subprocess.run(
        [*map(os.fsencode, ECC), b"memory", b"search", b"caf\xe9", b"--json"],
        cwd=repo, env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["query"] == "caf\ufffd"
