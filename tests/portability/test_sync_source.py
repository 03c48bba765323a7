"""The shared source of ``ecc sync``: read once, validated, a bad file refused in one line that
names it, and nothing written anywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ecc.contract.errors import EccError
from tests.portability import sync_fixtures
from tests.portability.sync_fixtures import SyncAdapter, ecc

adapter = sync_fixtures.adapter  # fixtures
source = sync_fixtures.source


def read(repo: Path, **settings: object):
    from ecc.portability.syncsource import read_source

    table = {"instructions": "AGENTS.md", "rules": "rules", "commands": "commands", "hooks": []}
    table.update(settings)
    return read_source(repo, table)


def test_reads_rules_commands_instructions_and_hooks(source: Path) -> None:
    hooks = [{"event": "pre_tool", "command": "make lint", "matcher": "Bash", "timeout_secs": 5}]
    found = read(source, hooks=hooks)
    assert found.project_dir == source
    assert found.instructions == "# Project\n\nBe kind to the tests.\n"
    assert found.instructions_path == source / "AGENTS.md"
    assert [(r.name, r.description, r.text) for r in found.rules] == [
        ("style", "House style", "Use black.\n"),
        ("tests", "", "Every fix has a test.\n"),
    ]
    [command] = found.commands
    assert (command.name, command.description, command.argument_hint, command.body) == (
        "review",
        "Review a change",
        "<branch>",
        "Review $ARGUMENTS.\n",
    )
    assert command.path == source / "commands" / "review.md"
    [hook] = found.hooks
    assert (hook.event, hook.command, hook.matcher, hook.timeout_secs) == (
        "pre_tool",
        "make lint",
        "Bash",
        5,
    )


def test_missing_sources_are_empty(git_repo: Path) -> None:
    found = read(git_repo)
    assert (found.instructions, found.instructions_path, found.rules, found.commands) == (
        "",
        None,
        (),
        (),
    )


def test_ecc_sections_of_the_instructions_file_are_not_source(git_repo: Path) -> None:
    (git_repo / "AGENTS.md").write_text(
        "Mine.\n\n<!-- BEGIN ecc sync: rules -->\n- style\n<!-- END ecc sync: rules -->\nAfter.\n"
    )
    assert read(git_repo).instructions == "Mine.\n\nAfter.\n"


def test_front_matter_round_trips_for_renderers() -> None:
    from ecc.portability.syncsource import front_matter, split_front_matter

    text = front_matter({"description": 'Say "hi": now', "argument-hint": "", "x": "a"})
    assert text == '---\ndescription: "Say \\"hi\\": now"\nx: a\n---\n'
    fields, body = split_front_matter(text + "Body.\n", Path("x.md"))
    assert fields == {"description": 'Say "hi": now', "x": "a"} and body == "Body.\n"


BAD = [
    ("rules/Style Guide.md", b"x\n", "name"),
    ("rules/style.md", b"caf\xe9\n", "UTF-8"),
    ("commands/review.md", b"---\ndescription: never closed\n", "front matter"),
    ("commands/review.md", b"---\n- a list\n---\nbody\n", "front matter"),
    ("rules/big.md", b"x" * (256 * 1024 + 1), "KiB"),
]


@pytest.mark.parametrize(
    ("relative", "data", "why"), BAD, ids=["name", "utf8", "open", "list", "size"]
)
def test_a_bad_source_file_is_refused_in_one_line_naming_it(
    source: Path, relative: str, data: bytes, why: str
) -> None:
    path = source / relative
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    before = sorted(p for p in source.rglob("*") if ".git" not in p.parts)
    done = ecc("sync")
    assert done.exit_code == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("Error: ") and relative in line and why in line
    assert sorted(p for p in source.rglob("*") if ".git" not in p.parts) == before


def test_symlinks_in_the_source_are_refused(source: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("not the repository's\n")
    os.symlink(outside, source / "rules" / "leak.md")
    with pytest.raises(EccError, match=r"rules/leak\.md.*symlink"):
        read(source)
    (source / "rules" / "leak.md").unlink()
    os.rename(source / "commands", source / "real-commands")
    os.symlink(source / "real-commands", source / "commands")
    with pytest.raises(EccError, match=r"commands.*symlink"):
        read(source)
    os.symlink(outside, source / "LINKED.md")
    with pytest.raises(EccError, match=r"LINKED\.md.*symlink"):
        read(source, instructions="LINKED.md", commands="real-commands")


def test_a_target_through_a_symlink_is_refused(source: Path, tmp_path: Path) -> None:
    """A repository's .acme -> ~/somewhere would make ecc sync write outside the project."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (source / ".acme" / "settings.json").unlink()
    (source / ".acme").rmdir()
    os.symlink(elsewhere, source / ".acme")
    done = ecc("sync")
    assert done.exit_code == 1
    assert ".acme" in done.stderr and "symlink" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_target_outside_the_project_is_refused(source: Path, adapter: SyncAdapter) -> None:
    from ecc.contract.types import SurfaceFile, SurfacePlan

    def escaping(harness, surface, source, usual):
        if surface == "commands":
            outside = source.project_dir.parent / "escape.txt"
            return SurfacePlan("native", [SurfaceFile(outside, content="x")])
        return usual(harness, surface, source)

    adapter.override = escaping
    done = ecc("sync", "--harness", "acme")
    assert done.exit_code == 1 and "outside the project" in done.stderr
    assert not (source.parent / "escape.txt").exists()


def test_a_bad_plan_from_an_adapter_is_one_line(source: Path, adapter: SyncAdapter) -> None:
    from ecc.contract.types import SurfaceFile, SurfacePlan

    def bad(harness, surface, source, usual):
        both = SurfaceFile(source.project_dir / "x.md", content="a", section="b")
        return SurfacePlan("native", [both])

    adapter.override = bad
    done = ecc("sync", "--harness", "acme")
    assert done.exit_code == 1
    [line] = done.stderr.strip().splitlines()
    assert "acme" in line and "x.md" in line and "exactly one" in line


@pytest.mark.parametrize(
    ("relative", "text", "why"),
    [
        (".ecc/sync-state.json", "{not json", "not valid JSON"),
        (".ecc/sync-state.json", '{"schema": "other"}', "ecc.sync-state.v1"),
        ("ACME.md", "<!-- BEGIN ecc sync: rules -->\nhalf\n", "without its END"),
        ("ACME.md", "<!-- END ecc sync: rules -->\n", "without its BEGIN"),
    ],
    ids=["state-json", "state-schema", "open-marker", "stray-marker"],
)
def test_a_damaged_record_or_target_is_refused(
    source: Path, relative: str, text: str, why: str
) -> None:
    (source / relative).write_text(text)
    before = sorted((p, p.read_bytes()) for p in source.rglob("*") if p.is_file())
    done = ecc("sync")
    assert done.exit_code == 1
    [line] = done.stderr.strip().splitlines()
    assert relative in line and why in line
    assert sorted((p, p.read_bytes()) for p in source.rglob("*") if p.is_file()) == before


def test_check_and_dry_run_together_is_a_usage_error(source: Path) -> None:
    done = ecc("sync", "--check", "--dry-run")
    assert done.exit_code == 2 and "not both" in done.output


def test_an_instructions_file_holding_only_ecc_sections_is_no_source(git_repo: Path) -> None:
    """ecc may create AGENTS.md for one harness's section: the next sync must see the same
    source as the first (no instructions file), or its rendering would change again."""
    (git_repo / "AGENTS.md").write_text(
        "<!-- BEGIN ecc sync: rules -->\n- style\n<!-- END ecc sync: rules -->\n"
    )
    found = read(git_repo)
    assert (found.instructions, found.instructions_path) == ("", None)
