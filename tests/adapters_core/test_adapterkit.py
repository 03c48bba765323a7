"""The adapter kit on its own: the command-hook protocol, the install dispatch, output events,
profile flags, and which hooks the core routes to an adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecc.adapterkit import ProfileFlags, install, marked
from ecc.adapterkit import events as ev
from ecc.adapterkit.hooks import HookProtocol
from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.types import HookDecision, HookEvent, IntegrationRequest, IntegrationResult
from ecc.runtime.config.model import AgentProfile
from ecc_plugins import shell

CLAUDE_LIKE = HookProtocol(
    "acme",
    phases={"Pre": "pre_tool", "Post": "post_tool"},
    kinds={"bash": "shell"},
    mcp_prefix="mcp__",
    text_inputs={"patch": "diff"},
    ask_event="Pre",
)
OWN_FIELDS = HookProtocol(
    "other",
    phases={"before": "pre_tool"},
    kinds={},
    event_field="event",
    session_field="sid",
    tool_use_id_field=None,
    tool_field="tool",
    input_field="args",
    cwd_field=None,
    output_field=None,
    product="Other",
)


def test_parse_reads_the_named_fields() -> None:
    payload = {
        "hook_event_name": "Post",
        "session_id": "s",
        "tool_use_id": "t",
        "cwd": "/w",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"ok": 1},
    }
    event = CLAUDE_LIKE.parse("ignored", payload)
    assert (event.harness, event.event, event.phase) == ("acme", "Post", "post_tool")
    assert (event.harness_session_id, event.tool_use_id, event.output) == ("s", "t", '{"ok": 1}')
    assert event.call is not None
    assert (event.call.tool, event.call.kind, event.call.cwd) == ("Bash", "shell", "/w")
    assert CLAUDE_LIKE.parse("Pre", {"tool_name": "mcp__a__b"}).call.kind == "mcp"
    assert CLAUDE_LIKE.parse("Pre", {"tool_name": "patch", "tool_input": "x"}).call.input == {
        "diff": "x"
    }
    unread = {"tool_use_id": "t", "cwd": "/w", "tool_response": "r"}  # not this dialect's fields
    own = OWN_FIELDS.parse(
        "", {"event": "before", "sid": "s", "tool": "mcp__x", "args": "raw", **unread}
    )
    assert own.call is not None
    assert (own.call.kind, own.call.input, own.call.cwd) == ("other", "raw", None)
    assert (own.harness_session_id, own.tool_use_id, own.output) == ("s", None, None)


OTHER_EVENTS = [
    None,
    [],
    "x",
    {},
    {"hook_event_name": "Pre"},
    {"hook_event_name": "Stop", "tool_name": "Bash"},
]


@pytest.mark.parametrize("payload", OTHER_EVENTS)
def test_anything_else_is_an_other_event(payload: object) -> None:
    event = CLAUDE_LIKE.parse("Start", payload)
    assert event.phase == "other" and event.call is None


def decision(verdict: str, phase: str = "pre_tool") -> HookDecision:
    return HookDecision(HookEvent("acme", "Pre", phase), decision=verdict, reason="risky")


def test_respond_allows_denies_and_asks_where_the_harness_can() -> None:
    assert CLAUDE_LIKE.respond(decision("allow")).exit_code == 0
    assert CLAUDE_LIKE.respond(decision("deny", "post_tool")).exit_code == 0
    denied = CLAUDE_LIKE.respond(decision("deny"))
    assert (denied.exit_code, denied.stderr) == (2, "risky\n")
    asked = CLAUDE_LIKE.respond(decision("ask"))
    assert asked.exit_code == 0
    assert json.loads(asked.stdout)["hookSpecificOutput"] == {
        "hookEventName": "Pre",
        "permissionDecision": "ask",
        "permissionDecisionReason": "risky",
    }
    cannot = decision("ask")
    answer = OWN_FIELDS.respond(cannot)
    assert answer.exit_code == 2 and cannot.decision == "deny"  # recorded as it was answered
    assert cannot.reason == "risky (Other hooks cannot ask for confirmation, so ecc denies it)"


def request(kind: str, tmp_path: Path, **kw: object) -> IntegrationRequest:
    return IntegrationRequest(kind, "install", "project", tmp_path, **kw)  # type: ignore[arg-type]


def test_dispatch_scope_and_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = IntegrationResult(changed_files=[tmp_path], message="m")
    assert install.dispatch(request("mcp", tmp_path), mcp=lambda r: done) is done
    assert install.dispatch(request("skills", tmp_path), mcp=lambda r: done) is None
    assert install.dispatch(request("other", tmp_path), mcp=lambda r: done) is None
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user = IntegrationRequest("hooks", "install", "user", tmp_path)
    assert install.scoped(user, ".x/y.json", ".p/y.json") == tmp_path / "home/.x/y.json"
    assert install.scoped(user, lambda: Path("/elsewhere"), ".p") == Path("/elsewhere")
    assert install.scoped(request("hooks", tmp_path), ".x", ".p/y.json") == tmp_path / ".p/y.json"
    assert install.note(user, done, "trust it", project_only=True).message == "m"
    assert install.note(user, done, "trust it", project_only=False).message == "m\ntrust it"
    unchanged = IntegrationResult(message="m")
    assert install.note(request("hooks", tmp_path), unchanged, "x", project_only=False).message == (
        "m"
    )


def test_command_hook_and_mcp_server_files(tmp_path: Path) -> None:
    hooks = tmp_path / "settings.json"
    options = {"command": "/bin/ecc", "mcp_command": ["/bin/mcp", "-v"]}
    req = request("hooks", tmp_path, options=options)
    install.command_hook(req, "acme", hooks, "acme settings", "Before", matcher=".*", timeout=9)
    [group] = json.loads(hooks.read_text())["hooks"]["Before"]
    assert group["matcher"] == ".*"
    assert group["hooks"][0]["command"].endswith("hook --harness acme")
    assert group["hooks"][0]["timeout"] == 9
    entry = install.memory_server(req, "acme")
    assert entry == {"command": "/bin/mcp", "args": ["-v"], "env": {"ECC_MEMORY_HARNESS": "acme"}}
    install.mcp_server(req, tmp_path / "mcp.json", "acme MCP", "servers", entry)
    assert json.loads((tmp_path / "mcp.json").read_text())["servers"]["ecc-memory"] == entry
    install.mcp_server(req, tmp_path / "config.toml", "acme config", "servers", entry)
    assert '[servers.ecc-memory]\ncommand = "/bin/mcp"' in (tmp_path / "config.toml").read_text()


def test_events() -> None:
    assert ev.harness_session("") == [] and ev.harness_session(5) == []
    assert [e.data for e in ev.harness_session("s")] == [{"id": "s"}]
    assert ev.tool_call(None, [1], "i").data == {"tool": "", "input": {}, "id": "i"}
    assert ev.usage(3, 4, cumulative=True).data == {
        "input_tokens": 3,
        "output_tokens": 4,
        "cost_usd": None,
        "cumulative": True,
    }
    assert ev.error(None).data == {"message": "error"} and ev.error(7).data == {"message": "7"}
    assert (ev.final("t").kind, ev.final("t").data) == ("final", {"text": "t"})


def test_profile_flags_fold_the_rest_unless_every_field_is_mapped() -> None:
    profile = AgentProfile(model="m", token_budget=5, permission_mode="odd")
    flags = ProfileFlags(profile, {"model", "permission_mode"})
    flags.add("--model", profile.model)
    flags.refuse_unknown("permission_mode", "no mode matches 'odd'", ["a", "b"])
    translation = flags.translation()
    assert translation.args == ["--model=m"]
    assert translation.refused == {"permission_mode": "no mode matches 'odd' (known: a, b)"}
    assert translation.prompt_prefix.startswith("ECC execution profile:\n- Token budget: 5")
    assert ProfileFlags(profile).translation().prompt_prefix == ""


def test_marked(tmp_path: Path) -> None:
    assert marked("acme", tmp_path, (".acme", "ACME.md")) is None
    (tmp_path / "ACME.md").write_text("")
    assert marked("acme", tmp_path, (".acme", "ACME.md")) == "acme"


def test_the_core_routes_harness_hooks_by_declaration() -> None:
    assert hooks_called_for(shell, "shell") == ["ecc_build_command", "ecc_resume_command"]
    assert hooks_called_for(shell, "claude") == []
