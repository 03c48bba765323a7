"""``ecc harness matrix``: each harness's rules, commands and project hooks as its adapter's
``ecc_sync_surface`` carries them (asked with an empty source, so nothing is written)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.portability import sync_fixtures
from tests.portability.sync_fixtures import SyncAdapter, ecc

adapter = sync_fixtures.adapter  # fixtures
source = sync_fixtures.source


def test_the_matrix_shows_each_sync_surface_mode(source: Path, adapter: SyncAdapter) -> None:
    before = sorted((p, p.read_bytes()) for p in source.rglob("*") if p.is_file())
    done = ecc("harness", "matrix", "--json")
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["sync_surfaces"] == ["rules", "commands", "hooks"]
    rows = {row["name"]: row for row in payload["harnesses"]}
    assert rows["acme"]["sync"] == {
        "rules": "native",
        "commands": "translated",
        "hooks": "translated",
    }
    assert rows["beta"]["sync"] == {
        "rules": "native",
        "commands": "unsupported",
        "hooks": "instruction-only",
    }
    assert rows["gamma"]["sync"] == dict.fromkeys(("rules", "commands", "hooks"), "unsupported")
    assert rows["shell"]["sync"]["rules"] == "unsupported"
    assert ("acme", "hooks") in adapter.calls
    assert sorted((p, p.read_bytes()) for p in source.rglob("*") if p.is_file()) == before


def test_markdown_and_text_show_the_sync_surfaces(source: Path, adapter: SyncAdapter) -> None:
    markdown = ecc("harness", "matrix", "--markdown")
    assert markdown.exit_code == 0, markdown.output
    lines = markdown.stdout.splitlines()
    assert lines[0].endswith("| rules | commands | project hooks |")
    beta = next(line for line in lines if line.startswith("| beta |"))
    assert beta.endswith("| native | unsupported | instruction-only |")
    text = ecc("harness", "matrix")
    assert text.exit_code == 0, text.output
    assert "acme: sync rules native, commands translated, hooks translated" in text.stdout


def test_an_adapter_failing_to_plan_shows_in_its_cell(source: Path, adapter: SyncAdapter) -> None:
    from ecc.contract.errors import EccError

    def broken(harness, surface, given, usual):
        if harness == "acme" and surface == "rules":
            raise EccError("acme cannot read its settings")
        return usual(harness, surface, given)

    adapter.override = broken
    rows = {
        r["name"]: r for r in json.loads(ecc("harness", "matrix", "--json").stdout)["harnesses"]
    }
    assert rows["acme"]["sync"]["rules"] == "error: acme cannot read its settings"
    assert rows["acme"]["sync"]["commands"] == "translated"
