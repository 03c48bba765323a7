"""``ecc_install_integration`` from a plugin's side: a third-party adapter keeps ecc's hooks,
MCP server and skills in files of its own, and ``ecc hooks``, ``ecc mcp``, ``ecc skills`` and
``ecc harness matrix`` reach them only through the hook."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ecc.cli.app import cli
from ecc.runtime.plugins import loader as plugins
from tests.portability.conftest import write_skill

MODULE = "ecc_test_acme_integration"

# ecc's entry of each kind lives in <project or home>/.acme/<kind>.json as {"ecc": VALUE}.
ACME_INTEGRATION = """
import difflib
import json
from pathlib import Path

from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, IntegrationResult

requests = []  # every request the core made, for the test to look at


@hookimpl
def ecc_harnesses():
    surfaces = frozenset({"direct", "hooks", "mcp", "skills"})
    lite = HarnessInfo(name="acme-lite", program="acme-lite", capabilities=frozenset({"direct"}))
    return [HarnessInfo(name="acme", program="acme", capabilities=surfaces), lite]


@hookimpl
def ecc_install_integration(harness, request):
    requests.append(request)
    if harness != "acme":
        return None
    base = (Path.home() if request.scope == "user" else request.project_dir) / ".acme"
    if request.kind == "skills":
        from ecc.portability.skillsync import sync_skills

        return sync_skills("acme", base / "skills", request)
    target = base / f"{request.kind}.json"
    old = target.read_text() if target.exists() else ""
    if old and "ecc" not in json.loads(old):
        raise EccError(f"{target} holds entries ecc did not write; left untouched")
    new = ""
    if request.action == "install":
        value = request.options["command"] if request.kind == "hooks" else None
        value = value or request.options["mcp_command"]
        new = json.dumps({"ecc": value}) + "\\n"
    changed = [target] if new != old else []
    diff = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a", "b"))
    if changed and not request.dry_run:
        base.mkdir(parents=True, exist_ok=True)
        if new:
            target.write_text(new)
        else:
            target.unlink()
    return IntegrationResult(changed, diff, f"acme {request.kind}: {request.action}", target)
"""


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The acme adapter as an installed module, the only adapter registered."""
    site = tmp_path / "acme-site"
    site.mkdir()
    (site / f"{MODULE}.py").write_text(ACME_INTEGRATION)
    monkeypatch.syspath_prepend(str(site))
    plugin_set = plugins.PluginSet(None, entry_points={"ecc.adapters": [("acme", MODULE)]})
    assert [record.error for record in plugin_set.records] == [None]
    plugins.use(plugin_set)
    yield sys.modules[MODULE]
    sys.modules.pop(MODULE, None)


@pytest.fixture
def repo(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(git_repo)
    return git_repo


def ecc(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def entry(path: Path) -> object:
    return json.loads(path.read_text())["ecc"]


def test_hooks_install_passes_how_to_run_ecc_and_honours_dry_run(acme, repo: Path) -> None:
    from ecc.cli.hooks_cmd import ecc_command

    target = repo / ".acme" / "hooks.json"
    dry = ecc("hooks", "install", "--harness", "acme", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert ecc_command("project") in dry.output and "1 file(s) would change" in dry.output
    assert not target.exists()
    done = ecc("hooks", "install", "--harness", "acme", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["changed_files"] == [str(target)] and report["message"] == "acme hooks: install"
    assert entry(target) == ecc_command("project")
    [request, _] = acme.requests
    assert (request.kind, request.action, request.scope) == ("hooks", "install", "project")
    assert request.project_dir == repo and request.dry_run is True
    again = json.loads(ecc("hooks", "install", "--harness", "acme", "--json").stdout)
    assert again["changed_files"] == []  # idempotent
    assert ecc("hooks", "uninstall", "--harness", "acme").exit_code == 0
    assert not target.exists()


def test_mcp_install_passes_the_server_argv_and_reports_the_location(
    acme, repo: Path, isolated_env: Path
) -> None:
    from ecc.cli.mcp_cmd import mcp_command

    done = ecc("mcp", "install", "--harness", "acme", "--scope", "user", "--json")
    assert done.exit_code == 0, done.output
    target = isolated_env / ".acme" / "mcp.json"
    report = json.loads(done.output)
    assert report["location"] == str(target) and report["server"] == "ecc-memory"
    assert entry(target) == mcp_command()
    assert acme.requests[-1].scope == "user"


def test_an_adapter_refusal_is_a_clear_error_and_the_file_stays(acme, repo: Path) -> None:
    target = repo / ".acme" / "hooks.json"
    target.parent.mkdir()
    target.write_text('{"theirs": 1}\n')
    refused = CliRunner().invoke(cli, ["hooks", "install", "--harness", "acme"])
    assert refused.exit_code == 1
    assert "holds entries ecc did not write" in refused.output
    assert target.read_text() == '{"theirs": 1}\n'


def test_skills_are_planned_as_a_dry_run_first_then_installed(acme, repo: Path) -> None:
    write_skill(repo / "skills", "tidy-up")
    done = ecc("skills", "install", "--harness", "acme")
    assert done.exit_code == 0, done.output
    assert (repo / ".acme" / "skills" / "tidy-up" / "SKILL.md").is_file()
    assert [(r.kind, r.dry_run) for r in acme.requests] == [("skills", True), ("skills", False)]
    assert acme.requests[0].options["source"] == str((repo / "skills").resolve())


def test_the_matrix_asks_with_a_dry_run_uninstall_and_writes_nothing(acme, repo: Path) -> None:
    assert ecc("mcp", "install", "--harness", "acme").exit_code == 0
    before = (repo / ".acme" / "mcp.json").read_text()
    acme.requests.clear()
    shown = ecc("harness", "matrix", "--json")
    assert shown.exit_code == 0, shown.output
    rows = {row["name"]: row for row in json.loads(shown.output)["harnesses"]}
    assert rows["acme"]["installed"] == {"hooks": False, "mcp": True, "skills": False}
    assert rows["acme-lite"]["installed"] == {"hooks": None, "mcp": None, "skills": None}
    assert {(r.action, r.dry_run) for r in acme.requests} == {("uninstall", True)}
    assert (repo / ".acme" / "mcp.json").read_text() == before


def test_a_harness_whose_adapter_returns_none_is_a_clear_error(acme, repo: Path) -> None:
    refused = CliRunner().invoke(cli, ["hooks", "install", "--harness", "acme-lite"])
    assert refused.exit_code == 1
    assert "no installed adapter can install hooks for harness 'acme-lite'" in refused.output
    assert [r.kind for r in acme.requests] == ["hooks"]  # asked, and answered None
    assert not (repo / ".acme").exists()
