"""``ecc sync``: one shared source written into each harness's files through ``ecc_sync_surface``,
recorded with checksums, removed when the source drops it, never written over a person's change.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.portability import sync_fixtures
from tests.portability.sync_fixtures import SyncAdapter, configure, ecc

adapter = sync_fixtures.adapter  # fixtures
source = sync_fixtures.source

BEGIN = "<!-- BEGIN ecc sync: rules -->"
END = "<!-- END ecc sync: rules -->"


def state(repo: Path) -> dict:
    return json.loads((repo / ".ecc" / "sync-state.json").read_text())


def snapshot(repo: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the project outside .git, with its content and modification time."""
    return {
        str(p.relative_to(repo)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


def test_sync_writes_every_surface_and_records_it(source: Path, adapter: SyncAdapter) -> None:
    done = ecc("sync")
    assert done.exit_code == 0, done.output
    acme = (source / "ACME.md").read_text()
    assert acme.startswith("My own notes.\n\n" + BEGIN + "\n# Project\n")
    assert acme.endswith("Be kind to the tests.\nUse black.\nEvery fix has a test.\n" + END + "\n")
    assert (source / ".acme" / "rules" / "style.md").read_text() == "Use black.\n"
    review = (source / ".acme" / "commands" / "review.txt").read_text()
    assert review == "# Review a change [<branch>]\nReview {input}.\n"
    settings = json.loads((source / ".acme" / "settings.json").read_text())
    assert settings["theme"] == "dark"
    assert [h["command"] for h in settings["hooks"]] == [
        "ecc hook --harness acme",  # ecc's risk hook is kept
        "make lint # ecc-sync",
    ]
    agents = (source / "AGENTS.md").read_text()
    assert agents.startswith("# Project\n\nBe kind to the tests.\n\n" + BEGIN + "\nRules:\n")
    assert "- style: House style\n- tests: Every fix has a test.\n" + END in agents
    assert (
        "<!-- BEGIN ecc sync: hooks -->\n- after post_tool: make lint\n"
        in (source / "BETA.md").read_text()
    )
    record = state(source)
    assert record["schema"] == "ecc.sync-state.v1"
    files = {(f["path"], f["surface"]): f for f in record["files"]}
    assert files[("AGENTS.md", "rules")]["harnesses"] == ["acme", "beta"]  # one file, two readers
    assert files[("AGENTS.md", "rules")]["kind"] == "section"
    assert files[(".acme/rules/style.md", "rules")]["kind"] == "whole"
    assert files[(".acme/settings.json", "hooks")]["kind"] == "merge"
    assert len(files[("ACME.md", "rules")]["sha256"]) == 64
    assert ("gamma", "rules") not in adapter.calls  # gamma is not in [sync] harnesses
    lines = done.stdout.splitlines()
    assert "acme: rules native, commands translated, hooks translated" in lines
    assert "beta: rules native, commands unsupported, hooks instruction-only" in lines
    assert "  beta has no commands" in lines


def test_a_second_sync_writes_nothing(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    before = snapshot(source)
    again = ecc("sync")
    assert again.exit_code == 0, again.output
    assert "up to date" in again.output
    assert snapshot(source) == before


def test_check_passes_after_a_sync_and_fails_after_a_hand_edit(source: Path) -> None:
    drifted = ecc("sync", "--check")
    assert drifted.exit_code == 1  # nothing synced yet
    assert ecc("sync").exit_code == 0
    clean = ecc("sync", "--check")
    assert clean.exit_code == 0, clean.output
    assert "in sync" in clean.output
    before = snapshot(source)
    review = source / ".acme" / "commands" / "review.txt"
    review.write_text(review.read_text() + "Also look at the docs.\n")
    check = ecc("sync", "--check")
    assert check.exit_code == 1
    assert (
        "+Also look at the docs." not in check.output
    )  # the diff goes from the copy to the source
    assert "-Also look at the docs." in check.output
    assert ".acme/commands/review.txt" in check.stderr.splitlines()[-1]
    assert "ACME.md" not in check.stderr
    assert {k: v for k, v in snapshot(source).items() if k != ".acme/commands/review.txt"} == {
        k: v for k, v in before.items() if k != ".acme/commands/review.txt"
    }


def test_check_sees_an_edited_section_and_a_merge_that_is_not_a_fixed_point(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    acme = source / "ACME.md"
    acme.write_text(acme.read_text().replace("Use black.", "Use tabs."))
    settings = source / ".acme" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"] = data["hooks"][:1]  # someone dropped the synced hook
    settings.write_text(json.dumps(data))
    check = ecc("sync", "--check")
    assert check.exit_code == 1
    last = check.stderr.splitlines()[-1]
    assert "ACME.md" in last and ".acme/settings.json" in last
    assert "-Use tabs.\n+Use black." in check.output


def test_removing_a_rule_removes_its_copies_and_nothing_else(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    mine = source / ".acme" / "rules" / "mine.md"
    mine.write_text("a person's own rule\n")
    (source / "rules" / "tests.md").unlink()
    done = ecc("sync")
    assert done.exit_code == 0, done.output
    assert not (source / ".acme" / "rules" / "tests.md").exists()
    assert (source / ".acme" / "rules" / "style.md").exists()
    assert mine.read_text() == "a person's own rule\n"
    assert "Every fix has a test." not in (source / "ACME.md").read_text()
    assert "- tests:" not in (source / "AGENTS.md").read_text()
    assert ".acme/rules/tests.md" not in {f["path"] for f in state(source)["files"]}
    # every rule gone: the copies go, and the folder ecc created, but not a person's file in it
    (source / "rules" / "style.md").unlink()
    assert ecc("sync").exit_code == 0
    assert not (source / ".acme" / "rules" / "style.md").exists() and mine.exists()
    mine.unlink()
    (source / "commands" / "review.md").unlink()
    assert ecc("sync").exit_code == 0
    assert not (source / ".acme" / "commands").exists()  # ecc created it, now empty
    assert (source / ".acme" / "settings.json").exists()


def test_dropping_the_hooks_takes_only_the_synced_entry_out(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    (source / ".ecc" / "config.toml").write_text('[sync]\nharnesses = ["acme", "beta"]\n')
    assert ecc("sync").exit_code == 0
    settings = json.loads((source / ".acme" / "settings.json").read_text())
    assert settings == {"theme": "dark", "hooks": [settings["hooks"][0]]}
    assert settings["hooks"][0]["command"] == "ecc hook --harness acme"


def test_markers_keep_a_persons_text_around_them(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    acme = source / "ACME.md"
    text = acme.read_text()
    acme.write_text("Top line.\n" + text + "\nA closing note.\n")
    (source / "rules" / "style.md").write_text("Use ruff format.\n")
    assert ecc("sync").exit_code == 0
    updated = acme.read_text()
    assert updated.startswith("Top line.\nMy own notes.\n\n" + BEGIN + "\n")
    assert updated.endswith(END + "\n\nA closing note.\n")
    assert "Use ruff format." in updated and "Use black." not in updated


def test_a_hand_edited_or_foreign_file_is_never_overwritten(source: Path) -> None:
    foreign = source / ".acme" / "commands" / "review.txt"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("someone's own command\n")
    before = snapshot(source)
    refused = ecc("sync")
    assert refused.exit_code == 1
    [line] = refused.stderr.strip().splitlines()
    assert ".acme/commands/review.txt" in line and "--force" in line
    assert snapshot(source) == before  # nothing written at all, no state file either
    forced = ecc("sync", "--force")
    assert forced.exit_code == 0, forced.output
    assert foreign.read_text().startswith("# Review a change")

    # ecc's copy edited by hand, then the source changes: refused, nothing written
    style = source / ".acme" / "rules" / "style.md"
    style.write_text("Use black, mostly.\n")
    (source / "rules" / "style.md").write_text("Use ruff.\n")
    before = snapshot(source)
    refused = ecc("sync")
    assert refused.exit_code == 1
    [line] = refused.stderr.strip().splitlines()
    assert ".acme/rules/style.md" in line and "changed since" in line
    assert snapshot(source) == before


def test_a_hand_edited_section_is_never_overwritten(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    acme = source / "ACME.md"
    acme.write_text(acme.read_text().replace("Use black.", "Use black (and isort)."))
    (source / "rules" / "tests.md").write_text("Every fix has two tests.\n")
    before = snapshot(source)
    refused = ecc("sync")
    assert refused.exit_code == 1
    [line] = refused.stderr.strip().splitlines()
    assert "ACME.md" in line and "section" in line
    assert snapshot(source) == before


def test_a_removed_copy_changed_by_hand_stays(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    copy = source / ".acme" / "rules" / "tests.md"
    copy.write_text("my version now\n")
    (source / "rules" / "tests.md").unlink()
    refused = ecc("sync")
    assert refused.exit_code == 1 and ".acme/rules/tests.md" in refused.stderr
    assert copy.read_text() == "my version now\n"


def test_conflicting_plans_are_refused(source: Path, adapter: SyncAdapter) -> None:
    adapter.beta_agents = "Something else.\n"
    before = snapshot(source)
    refused = ecc("sync")
    assert refused.exit_code == 1
    [line] = refused.stderr.strip().splitlines()
    assert "acme" in line and "beta" in line and "AGENTS.md" in line
    assert snapshot(source) == before


def test_dry_run_prints_diffs_and_writes_nothing(source: Path) -> None:
    before = snapshot(source)
    dry = ecc("sync", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "+Review {input}." in dry.output and "+++ .acme/commands/review.txt" in dry.output
    assert snapshot(source) == before


def test_json_reports_each_file_and_each_plan(source: Path) -> None:
    done = ecc("sync", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["harnesses"] == ["acme", "beta"]
    changed = {row["path"]: row["action"] for row in report["files"]}
    assert changed[".acme/commands/review.txt"] == "write"
    assert changed["AGENTS.md"] == "write"
    plans = {(p["harness"], p["surface"]): p for p in report["plans"]}
    assert plans[("acme", "commands")]["mode"] == "translated"
    assert plans[("beta", "commands")] == {
        "harness": "beta",
        "surface": "commands",
        "mode": "unsupported",
        "notes": ["beta has no commands"],
    }
    again = json.loads(ecc("sync", "--json").stdout)
    assert again["files"] == [] and again["up_to_date"] is True


def test_harness_option_syncs_only_that_harness(source: Path) -> None:
    done = ecc("sync", "--harness", "beta")
    assert done.exit_code == 0, done.output
    assert not (source / ".acme" / "rules").exists()
    assert BEGIN in (source / "AGENTS.md").read_text()
    assert {f["path"] for f in state(source)["files"]} == {"AGENTS.md", "BETA.md"}
    assert ecc("sync").exit_code == 0
    assert ecc("sync", "--harness", "beta").exit_code == 0
    assert (source / ".acme" / "rules" / "style.md").exists()  # acme's files are not beta's


def test_a_harness_dropped_from_the_config_loses_its_copies(source: Path) -> None:
    assert ecc("sync").exit_code == 0
    configure(source, ["beta"])
    done = ecc("sync")
    assert done.exit_code == 0, done.output
    assert not (source / ".acme" / "rules").exists()
    assert not (source / ".acme" / "commands").exists()
    assert BEGIN not in (source / "ACME.md").read_text()
    assert (source / "ACME.md").read_text() == "My own notes.\n"
    settings = json.loads((source / ".acme" / "settings.json").read_text())
    assert [h["command"] for h in settings["hooks"]] == ["ecc hook --harness acme"]
    assert BEGIN in (source / "AGENTS.md").read_text()  # beta still reads it
    assert {tuple(f["harnesses"]) for f in state(source)["files"]} == {("beta",)}


def test_no_harnesses_unknown_and_unsupported(source: Path, adapter: SyncAdapter) -> None:
    (source / ".ecc" / "config.toml").write_text("[sync]\n")
    none = ecc("sync")
    assert none.exit_code == 1
    assert "[sync] harnesses" in none.stderr and "ecc config set" in none.stderr
    unknown = ecc("sync", "--harness", "nope")
    assert unknown.exit_code == 1 and "unknown harness 'nope'" in unknown.stderr
    gamma = ecc("sync", "--harness", "gamma")
    assert gamma.exit_code == 0, gamma.output
    assert "gamma: unsupported" in gamma.output
    assert ("gamma", "rules") in adapter.calls


def test_skills_and_mcp_go_through_the_install_integration(
    source: Path, adapter: SyncAdapter
) -> None:
    skill = source / "skills" / "tidy-up"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: tidy-up\ndescription: Tidy.\norigin: ECC\n---\nRun make format.\n"
    )
    configure(source, ["acme"], 'skills = "skills"\nmcp = true\n')
    done = ecc("sync", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    paths = {row["path"] for row in report["files"]}
    assert ".acme/skills/tidy-up/SKILL.md" in paths and ".acme/mcp.json" in paths
    assert (source / ".acme" / "skills" / "tidy-up" / "SKILL.md").exists()
    assert json.loads((source / ".acme" / "mcp.json").read_text())["ecc"] == ["ecc-memory-mcp"]
    kinds = {(r.kind, r.scope, r.action) for r in adapter.requests}
    assert kinds == {("skills", "project", "install"), ("mcp", "project", "install")}
    assert ecc("sync", "--check").exit_code == 0
    (source / ".acme" / "mcp.json").unlink()
    check = ecc("sync", "--check")
    assert check.exit_code == 1 and ".acme/mcp.json" in check.stderr.splitlines()[-1]
    again = ecc("sync", "--json")
    assert {row["path"] for row in json.loads(again.stdout)["files"]} == {".acme/mcp.json"}


def test_an_invalid_skills_source_stops_everything(source: Path) -> None:
    (source / "skills" / "broken").mkdir(parents=True)
    (source / "skills" / "broken" / "SKILL.md").write_text("no front matter\n")
    configure(source, ["acme", "beta"], 'skills = "skills"\n')
    before = snapshot(source)
    done = ecc("sync")
    assert done.exit_code == 1 and "skills" in done.stderr
    assert snapshot(source) == before


def test_untrusted_project_hooks_are_never_written_but_still_checked(source: Path) -> None:
    """CI checks a fresh clone, where nobody trusted .ecc/config.toml: the hooks it names are
    compared (nothing runs), while a sync that would write them needs `ecc trust`."""
    assert ecc("sync").exit_code == 0
    config = source / ".ecc" / "config.toml"
    config.write_text(config.read_text() + "# a teammate's edit: trust is for the old content\n")
    check = ecc("sync", "--check")
    assert check.exit_code == 0, check.output
    assert "ecc trust" in check.stderr  # the notice that the hooks are not applied
    before = snapshot(source)
    refused = ecc("sync")
    assert refused.exit_code == 1
    assert "[[sync.hooks]]" in refused.stderr.splitlines()[-1]
    assert "ecc trust" in refused.stderr.splitlines()[-1]
    assert snapshot(source) == before  # the synced hook was not taken out either
    assert ecc("trust").exit_code == 0
    assert ecc("sync").exit_code == 0


def test_an_adapter_giving_no_plan_leaves_its_files_alone(
    source: Path, adapter: SyncAdapter
) -> None:
    """No answer (an older or missing adapter) is not an empty plan: a teammate's sync with
    it must not delete the committed copies."""
    assert ecc("sync").exit_code == 0
    recorded = state(source)

    def silent(harness, surface, given, usual):
        return None if harness == "acme" else usual(harness, surface, given)

    adapter.override = silent
    before = snapshot(source)
    done = ecc("sync")
    assert done.exit_code == 0, done.output
    assert "acme: unsupported (its adapter gives no sync plan)" in done.stdout
    assert snapshot(source) == before and state(source) == recorded
    assert ecc("sync", "--check").exit_code == 0
