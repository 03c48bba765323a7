"""A fake adapter plugin for the ``ecc sync`` tests, and a project with a shared source.

``acme`` renders every surface into files of its own: a marked section of ``ACME.md`` (a
person's notes around it), whole rule and command copies under ``.acme/``, a merge of
``.acme/settings.json`` for hooks, and a section of ``AGENTS.md``, the shared instructions file
itself, which ``beta`` gives too (identically: one file for two harnesses). ``gamma`` has no plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ecc.cli.app import cli
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import (
    HarnessInfo,
    IntegrationResult,
    SurfaceFile,
    SurfacePlan,
    SyncSource,
)
from ecc.runtime.plugins import loader as plugins

MARK = " # ecc-sync"


def hooks_merge(source: SyncSource) -> Callable[[str | None], str]:
    """Keep every entry of ``hooks`` not ecc sync's (a person's, ecc's risk hook); ours after."""

    def merge(current: str | None) -> str:
        data = json.loads(current) if current else {}
        kept = [h for h in data.get("hooks", []) if not h["command"].endswith(MARK)]
        ours = [
            {"on": h.event, "tool": h.matcher, "command": h.command + MARK} for h in source.hooks
        ]
        data["hooks"] = kept + ours
        if not data["hooks"]:
            del data["hooks"]
        return json.dumps(data, indent=2) + "\n" if data else ""

    return merge


class SyncAdapter:
    """Registered as a plugin class; ``beta_agents`` set: beta's AGENTS.md section differs."""

    def __init__(self) -> None:
        self.beta_agents: str | None = None
        self.calls: list[tuple[str, str]] = []
        self.requests: list[object] = []
        # (harness, surface, source, the usual plan function) -> a plan: a test's own adapter
        self.override: Callable[..., object] | None = None

    @hookimpl
    def ecc_harnesses(self):
        return [
            HarnessInfo(name=name, program=name, capabilities=frozenset({"direct"}))
            for name in ("acme", "beta", "gamma")
        ]

    @hookimpl
    def ecc_sync_surface(self, harness: str, surface: str, source: SyncSource):
        self.calls.append((harness, surface))
        if self.override is not None:
            return self.override(harness, surface, source, self.plan)
        return self.plan(harness, surface, source)

    def plan(self, harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
        if harness == "gamma":
            return None
        root = source.project_dir
        listing = "".join(
            f"- {r.name}: {r.description or r.text.splitlines()[0]}\n" for r in source.rules
        )
        agents = SurfaceFile(root / "AGENTS.md", section="Rules:\n" + listing)
        if harness == "beta":
            if surface == "rules":
                if self.beta_agents is not None:
                    agents = SurfaceFile(root / "AGENTS.md", section=self.beta_agents)
                return SurfacePlan("native", [agents])
            if surface == "commands":
                return SurfacePlan("unsupported", notes=["beta has no commands"])
            said = "".join(f"- after {h.event}: {h.command}\n" for h in source.hooks)
            return SurfacePlan("instruction-only", [SurfaceFile(root / "BETA.md", section=said)])
        if surface == "rules":
            body = source.instructions + "".join(r.text for r in source.rules)
            files = [SurfaceFile(root / "ACME.md", section=body), agents]
            files += [
                SurfaceFile(root / ".acme" / "rules" / f"{r.name}.md", content=r.text)
                for r in source.rules
            ]
            return SurfacePlan("native", files)
        if surface == "commands":
            files = [
                SurfaceFile(
                    root / ".acme" / "commands" / f"{c.name}.txt",
                    content=f"# {c.description} [{c.argument_hint}]\n"
                    + c.body.replace("$ARGUMENTS", "{input}"),
                )
                for c in source.commands
            ]
            return SurfacePlan("translated", files)
        merge = hooks_merge(source)
        return SurfacePlan(
            "translated", [SurfaceFile(root / ".acme" / "settings.json", merge=merge)]
        )

    @hookimpl
    def ecc_install_integration(self, harness: str, request):
        self.requests.append(request)
        if harness != "acme":
            return None
        base = request.project_dir / ".acme"
        if request.kind == "skills":
            from ecc.portability.skillsync import sync_skills

            return sync_skills("acme", base / "skills", request)
        if request.kind != "mcp":
            return None
        target = base / "mcp.json"
        new = json.dumps({"ecc": request.options["mcp_command"]}) + "\n"
        old = target.read_text() if target.exists() else None
        changed = [target] if new != old else []
        if changed and not request.dry_run:
            target.write_text(new)
        return IntegrationResult(changed, f"+{new}" if changed else "", "acme mcp", target)


@pytest.fixture
def adapter() -> Iterator[SyncAdapter]:
    plugin = SyncAdapter()
    plugin_set = plugins.PluginSet(None)
    plugin_set.pm.register(plugin, name="test:acme-sync")
    plugins.use(plugin_set)
    yield plugin
    plugins.reset()


CONFIG = """[sync]
harnesses = {harnesses}
{extra}
[[sync.hooks]]
event = "post_tool"
matcher = "Bash"
command = "make lint"
"""


def ecc(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def configure(repo: Path, harnesses: list[str], extra: str = "") -> None:
    """Write the project's [sync] table (``extra``: more keys of it) and trust it (its hooks
    run programs)."""
    config = repo / ".ecc" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(CONFIG.format(harnesses=json.dumps(harnesses), extra=extra))
    done = ecc("trust")
    assert done.exit_code == 0, done.output


@pytest.fixture
def source(git_repo: Path, monkeypatch: pytest.MonkeyPatch, adapter: SyncAdapter) -> Path:
    """A project with AGENTS.md, two rules, one command, one hook, and a person's files."""
    monkeypatch.chdir(git_repo)
    (git_repo / "AGENTS.md").write_text("# Project\n\nBe kind to the tests.\n")
    rules = git_repo / "rules"
    rules.mkdir()
    (rules / "style.md").write_text("---\ndescription: House style\n---\nUse black.\n")
    (rules / "tests.md").write_text("Every fix has a test.\n")
    commands = git_repo / "commands"
    commands.mkdir()
    (commands / "review.md").write_text(
        "---\ndescription: Review a change\nargument-hint: <branch>\n---\nReview $ARGUMENTS.\n"
    )
    (git_repo / "ACME.md").write_text("My own notes.\n")
    settings = git_repo / ".acme" / "settings.json"
    settings.parent.mkdir()
    mine = {"on": "pre_tool", "tool": "", "command": "ecc hook --harness acme"}
    settings.write_text(json.dumps({"theme": "dark", "hooks": [mine]}, indent=2) + "\n")
    configure(git_repo, ["acme", "beta"])
    return git_repo
