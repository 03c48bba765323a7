"""The plugin contract keeps its reference and its tests: every hook declared in
``ecc.contract.hookspecs`` has a section in docs/plugin-hooks.md headed by its exact signature,
naming its group and whether it is firstresult, with an example that registers and answers; and
every hook is named by at least one test besides this one."""

from __future__ import annotations

import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from ecc.contract import hookspecs
from ecc.contract.markers import HookspecMarker, hookimpl
from ecc.contract.types import HarnessInfo
from ecc.runtime.plugins import loader as plugins
from tests.conftest import REPO

DOC = REPO / "docs" / "plugin-hooks.md"
TEST_ROOTS = ("tests", "adapters/*/tests", "examples/*/tests", "plugins/*/tests")
OWNER = "acme"  # the name every example owns (harness, backend or executor)
STRANGER = "not-acme"

HEADING = re.compile(r"^### (\w+)\((.*)\)[ \t]*$", re.M)
SECTION_END = re.compile(r"^#{1,3} ", re.M)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def hooks() -> dict[str, inspect.Signature]:
    """Every hook of the contract: the functions ``@hookspec`` marked, with their signatures."""
    marked = {
        name: value
        for name, value in vars(hookspecs).items()
        if inspect.isfunction(value) and hasattr(value, HookspecMarker.attribute)
    }
    return {name: inspect.signature(function) for name, function in sorted(marked.items())}


def spec_options(name: str) -> dict[str, Any]:
    return getattr(getattr(hookspecs, name), HookspecMarker.attribute)


def family(name: str) -> tuple[str, ...]:
    """The groups whose plugins may implement hook ``name``: the spec's own ``@family``."""
    return tuple(getattr(hookspecs, name).ecc_family)


def test_every_hook_declares_its_family_of_known_groups() -> None:
    for name in hooks():
        declared = getattr(getattr(hookspecs, name), "ecc_family", None)
        assert declared, f"{name} has no @family"
        assert set(declared) <= set(hookspecs.GROUPS), f"{name}: {declared}"
    assert {name: family(name) for name in hooks()} == plugins.HOOK_GROUPS


def sections() -> dict[str, tuple[list[str], str, int]]:
    """``{hook: (arguments, section text, line of the heading)}`` from the reference."""
    text = DOC.read_text(encoding="utf-8")
    found: dict[str, tuple[list[str], str, int]] = {}
    for heading in HEADING.finditer(text):
        name, raw = heading.group(1), heading.group(2)
        assert name not in found, f"two sections for {name} in {DOC.name}"
        end = SECTION_END.search(text, heading.end())
        body = text[heading.end() : end.start() if end else len(text)]
        arguments = [part.strip() for part in raw.split(",")] if raw.strip() else []
        found[name] = (arguments, body, text.count("\n", 0, heading.start()) + 1)
    return found


def field(body: str, label: str) -> str:
    match = re.search(rf"^- \*\*{re.escape(label)}:\*\* (.+?)(?=^- \*\*|^\s*$)", body, re.M | re.S)
    assert match, f"no '- **{label}:**' line"
    return " ".join(match.group(1).split())


# -- every hook is documented, with exactly its arguments -------------------------------------


def test_the_contract_declares_hooks() -> None:
    assert len(hooks()) >= 15 and "ecc_build_command" in hooks()  # the introspection works


@pytest.mark.parametrize("name", sorted(hooks()))
def test_every_hook_has_a_section_headed_by_its_signature(name: str) -> None:
    documented = sections()
    assert name in documented, f"{DOC.name} has no '### {name}(...)' heading"
    spec_arguments = list(hooks()[name].parameters)
    assert documented[name][0] == spec_arguments, (
        f"{DOC.name} heading of {name} lists {documented[name][0]}; the spec takes {spec_arguments}"
    )


def test_no_section_documents_a_hook_the_contract_lacks() -> None:
    assert sorted(set(sections()) - set(hooks())) == []


@pytest.mark.parametrize("name", sorted(hooks()))
def test_every_section_names_the_hooks_group_and_firstresult(name: str) -> None:
    _, body, _ = sections()[name]
    assert re.findall(r"`(ecc\.[a-z_]+)`", field(body, "Group")) == list(family(name))
    firstresult = field(body, "firstresult").split()[0]
    assert firstresult == ("yes" if spec_options(name)["firstresult"] else "no")


# -- every hook is tested ---------------------------------------------------------------------


def files_that_test() -> list[Path]:
    here = Path(__file__).resolve()
    found = []
    for root in TEST_ROOTS:
        for directory in REPO.glob(root):
            found += [p for p in directory.rglob("*.py") if p.resolve() != here]
    return sorted(found)


def test_every_hook_is_named_by_a_test_besides_this_one() -> None:
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in files_that_test()]
    untested = [
        name for name in hooks() if not any(re.search(rf"\b{name}\b", text) for text in texts)
    ]
    assert untested == [], f"hooks no test names (write one that calls them): {untested}"


# -- every example registers and answers ------------------------------------------------------


def sample_arguments(tmp_path: Path) -> dict[str, Any]:
    """A simple, valid value for every argument a hook takes, by name."""
    import click

    from ecc.contract.types import (
        HookDecision,
        HookEvent,
        IntegrationRequest,
        LaunchContext,
        MemoryCandidate,
        Notification,
        PullRequestProposal,
        SessionRecord,
        SyncCommand,
        SyncSource,
        ToolCall,
    )
    from ecc.runtime.config import view as fastconfig
    from ecc.runtime.config.model import AgentProfile

    config = fastconfig.view()  # the read-only view hooks receive on the hot paths
    profile = AgentProfile(model="acme-large")
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    event = HookEvent(harness=OWNER, event="before_tool", phase="pre_tool")
    return {
        "harness": OWNER,
        "name": OWNER,
        "config": config,
        "launch": LaunchContext("s1", "fix the test", project, project, config, profile=profile),
        "profile": profile,
        "harness_session_id": "acme-session-1",
        "project_dir": project,
        "line": '{"type": "start", "session": "acme-session-1"}',
        "stream": "stdout",
        "request": IntegrationRequest(
            kind="mcp",
            action="install",
            scope="project",
            project_dir=project,
            dry_run=True,
            options={"command": "ecc", "mcp_command": ["ecc-memory-mcp"]},
        ),
        "event": "before_tool",
        "payload": {"type": "before_tool", "tool": "sh", "args": {"command": "ls"}},
        "decision": HookDecision(event=event, decision="deny", reason="ecc: sh call blocked"),
        "call": ToolCall(tool="sh", input={"command": "terraform apply"}, kind="shell"),
        "notification": Notification("session_failed", "s1 failed", "exit 1", session_id="s1"),
        "settings": {"path": str(tmp_path / "notifications.txt")},
        "cli": click.Group("ecc"),
        "proposal": PullRequestProposal(
            session_id="s1",
            repo_root=project,
            remote="origin",
            remote_url="https://github.com/acme/acme.git",
            branch="ecc/s1",
            base="main",
            title="fix the test",
            body="fix the test",
        ),
        "sessions": [
            SessionRecord(
                session={"id": "s1", "state": "completed", "harness": OWNER},
                tool_calls=({"tool": "sh", "decision": "allow"},),
            )
        ],
        "query": "sign-in problems",
        "candidates": [
            MemoryCandidate("0:1", "mem_1", "project", "i1", "d1", "Login\n\nsign-in fails", 0)
        ],
        "whole_indexes": ["i1"],
        "cache_dir": tmp_path / "memory-index",
        "surface": "commands",
        "source": SyncSource(
            project_dir=project,
            commands=(SyncCommand("review", "Review $ARGUMENTS", "Review a change"),),
        ),
    }


def examples() -> list[tuple[str, int, str]]:
    found = []
    for name, (_, body, line) in sections().items():
        blocks = PYTHON_BLOCK.findall(body)
        assert blocks, f"the section of {name} ({DOC.name}:{line}) has no ```python example"
        found += [(name, line, block) for block in blocks]
    return found


@pytest.mark.parametrize(
    ("name", "line", "source"), examples(), ids=[f"{e[0]}:{e[1]}" for e in examples()]
)
def test_every_example_registers_and_answers_its_hook(
    name: str, line: int, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module_name = f"ecc_doc_example_{name}"
    module = types.ModuleType(module_name)
    exec(compile(source, f"{DOC}:{line}", "exec"), module.__dict__)
    if name in plugins.HARNESS_HOOKS and not hasattr(module, "ecc_harnesses"):
        # a harness hook reaches only the plugins that declare the harness: in a real adapter
        # the example sits beside its ecc_harnesses (see that section), here it is added
        module.ecc_harnesses = hookimpl(lambda: HarnessInfo(name=OWNER, program=OWNER))
    monkeypatch.setitem(sys.modules, module_name, module)
    group = family(name)[0]
    plugin_set = plugins.PluginSet(None, entry_points={group: [(OWNER, module_name)]})
    [record] = plugin_set.records
    assert record.error is None, f"{DOC.name}:{line}: {record.error}"
    assert name in record.hooks, f"{DOC.name}:{line} does not implement {name}"
    samples = sample_arguments(tmp_path)
    kwargs = {argument: samples[argument] for argument in hooks()[name].parameters}
    owner_key = next((key for key in ("harness", "name") if key in kwargs), None)
    if owner_key is None:
        getattr(plugin_set.hook, name)(**kwargs)  # it runs on simple arguments
        return
    if owner_key == "harness":

        def call(**arguments: object) -> object:
            return getattr(plugin_set.harness_hook(arguments["harness"]), name)(**arguments)
    else:
        call = getattr(plugin_set.hook, name)
    own = call(**{**kwargs, owner_key: OWNER})
    foreign = call(**{**kwargs, owner_key: STRANGER})
    if spec_options(name)["firstresult"]:
        assert own is not None, f"{DOC.name}:{line}: no answer for its own {owner_key}"
        assert foreign is None, f"{DOC.name}:{line}: answered for {owner_key} {STRANGER!r}"
    else:
        assert not any(foreign), f"{DOC.name}:{line}: answered for {owner_key} {STRANGER!r}"
