"""``ecc-memory-mcp`` driven by the SDK's own stdio client (checklist 8.3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from ecc.mcp.server import MemoryTools, StartupError, ToolCallError, render
from ecc.vault.format import serialize_memory_document
from tests.conftest import git, run_ecc
from tests.vault.conftest import full_memory

SERVER = str(Path(sys.executable).with_name("ecc-memory-mcp"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def session(repo: Path, harness: str | None = "claude", command: str = SERVER, **extra: str):
    env = dict(os.environ)
    env.pop("ECC_MEMORY_HARNESS", None)
    if harness is not None:
        env["ECC_MEMORY_HARNESS"] = harness
    env.update(extra)
    return StdioServerParameters(command=command, env=env, cwd=str(repo))


async def with_client(params: StdioServerParameters, body) -> None:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await body(client)


def run(params: StdioServerParameters, body) -> None:
    anyio.run(with_client, params, body)


def payload(result) -> dict:
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def test_tools_and_full_round_trip(repo: Path) -> None:
    """8.3 #87 exact tools; #88 descriptions/schemas; #94 save; #95 search/read/doctor;
    #96 identity arguments refused; #109 empty body; #110 secret refused, nothing written;
    plus the MCP-writes / CLI-reads direction."""

    async def body(client: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == ["memory_doctor", "memory_read", "memory_save", "memory_search"]
        save = tools["memory_save"]
        assert "unreviewed" in save.description
        text = json.dumps(save.input_schema)
        assert "trust" not in text and "sourceHarness" not in text
        assert 'targetHarness"' not in json.dumps(tools["memory_search"].input_schema)
        assert save.input_schema["properties"]["body"]["minLength"] == 1
        assert tools["memory_search"].annotations.read_only_hint is True
        assert save.annotations.read_only_hint is False

        saved = await client.call_tool(
            "memory_save", {"title": "Migration rollout", "body": "Rollout waits on the migration."}
        )
        assert not saved.is_error
        memory = payload(saved)["memory"]
        assert (memory["trust"], memory["sourceHarness"]) == ("unreviewed", "claude")
        assert "body" not in memory
        found = payload(
            await client.call_tool("memory_search", {"query": "migration rollout", "limit": 5})
        )
        assert [item["memory"]["id"] for item in found["results"]] == [memory["id"]]
        read = payload(await client.call_tool("memory_read", {"id": memory["id"]}))
        assert read["memory"]["body"] == "Rollout waits on the migration."
        doctor = payload(await client.call_tool("memory_doctor", {}))
        assert doctor["ok"] is True and doctor["memoryCount"] == 1
        assert "invalidFiles" not in doctor and "brokenLinks" not in doctor

        for args in (
            {"title": "x", "body": "y", "sourceHarness": "codex"},
            {"title": "x", "body": ""},
            {"title": "x", "body": "y", "kind": "task"},
        ):
            with pytest.raises(MCPError) as caught:
                await client.call_tool("memory_save", args)
            assert caught.value.code == -32602
        with pytest.raises(MCPError) as caught:
            await client.call_tool("memory_search", {"targetHarness": "codex"})
        assert caught.value.code == -32602
        secret = "ghp_" + "S" * 30
        refused = await client.call_tool("memory_save", {"title": "Token", "body": f"x\n{secret}"})
        assert refused.is_error
        error = payload(refused)["error"]
        assert error["code"] == "MEMORY_WRITE_REJECTED" and "suspected secret" in error["message"]
        assert secret not in refused.content[0].text and "Traceback" not in refused.content[0].text

    run(session(repo), body)
    cli = json.loads(run_ecc("memory", "search", "migration", "--json", cwd=repo).stdout)
    assert cli["results"][0]["memory"]["sourceHarness"] == "claude"
    assert len(list((repo / ".ecc/memory/project/notes").iterdir())) == 1  # secret not written


def test_cli_writes_mcp_reads_and_identity_binding(repo: Path) -> None:
    """CLI-writes/MCP-reads; 8.3 #97 hidden memory; #98 doctor; #99 backlinks before cap."""
    out = run_ecc(
        "memory", "save", "--title", "Shared", "--stdin", "--json", cwd=repo, input="hello all"
    )
    shared = json.loads(out.stdout)["memory"]["id"]
    hidden = json.loads(
        run_ecc(
            "memory",
            "save",
            "--title",
            "Hermes only",
            "--target",
            "hermes",
            "--source-harness",
            "claude",
            "--stdin",
            "--json",
            cwd=repo,
            input="secret plan",
        ).stdout
    )["memory"]["id"]
    notes = repo / ".ecc/memory/project/notes"
    for n in range(100):
        doc = full_memory(id=f"mem_hidden_{n:03}", targetHarnesses=["hermes"], links=[shared])
        (notes / f"mem_hidden_{n:03}.md").write_text(serialize_memory_document(doc))
    visible = full_memory(id="mem_visible_link", targetHarnesses=["claude"], links=[shared])
    (notes / "mem_visible_link.md").write_text(serialize_memory_document(visible))

    async def body(client: ClientSession) -> None:
        read = payload(await client.call_tool("memory_read", {"id": shared}))
        assert read["memory"]["body"] == "hello all"
        assert [b["id"] for b in read["backlinks"]] == ["mem_visible_link"]
        assert read["backlinksTruncated"] is False
        found = payload(await client.call_tool("memory_search", {"query": "hermes plan"}))
        assert hidden not in [item["memory"]["id"] for item in found["results"]]
        missing = await client.call_tool("memory_read", {"id": hidden})
        assert missing.is_error and payload(missing)["error"]["code"] == "MEMORY_READ_FAILED"
        doctor = payload(await client.call_tool("memory_doctor", {}))
        assert doctor["memoryCount"] == 2 and hidden not in json.dumps(doctor)

    run(session(repo), body)


def test_user_scope_gate(repo: Path, tmp_path: Path) -> None:
    """8.3 #100 refused without opt-in; #101 allowed only when asked."""

    async def refused(client: ClientSession) -> None:
        for name, args in (
            ("memory_save", {"title": "u", "body": "b", "scope": "user"}),
            ("memory_search", {"scopes": ["user"]}),
            ("memory_read", {"id": "mem_abc", "scope": "user"}),
        ):
            with pytest.raises(MCPError, match="user memory scope is disabled"):
                await client.call_tool(name, args)

    run(session(repo), refused)

    async def allowed(client: ClientSession) -> None:
        saved = payload(
            await client.call_tool(
                "memory_save", {"title": "Mine", "body": "personal", "scope": "user"}
            )
        )
        memory_id = saved["memory"]["id"]
        default = payload(await client.call_tool("memory_search", {"query": "personal"}))
        assert default["results"] == []
        user = payload(
            await client.call_tool("memory_search", {"query": "personal", "scopes": ["user"]})
        )
        assert [r["memory"]["id"] for r in user["results"]] == [memory_id]
        read = payload(await client.call_tool("memory_read", {"id": memory_id, "scope": "user"}))
        assert read["memory"]["scope"] == "user"

    run(session(repo, ECC_MEMORY_ALLOW_USER_SCOPE="1"), allowed)


def test_symlinked_bin_path(repo: Path, tmp_path: Path) -> None:
    """8.3 #92: started through a symlink (as npm/pipx shims do) it still lists 4 tools."""
    link = tmp_path / "bin-link"
    link.symlink_to(SERVER)

    async def body(client: ClientSession) -> None:
        assert len((await client.list_tools()).tools) == 4

    run(session(repo, command=str(link)), body)


def test_startup_requires_identity(repo: Path) -> None:
    """8.3 #102: constructor and process both refuse a missing/invalid ECC_MEMORY_HARNESS."""
    with pytest.raises(StartupError, match="ECC_MEMORY_HARNESS"):
        MemoryTools(env={})
    env = {k: v for k, v in os.environ.items() if k != "ECC_MEMORY_HARNESS"}
    for value in (None, "Claude", "../x"):
        if value is not None:
            env["ECC_MEMORY_HARNESS"] = value
        out = subprocess.run(
            [SERVER],
            env=env,
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
        assert out.returncode == 1 and "ECC_MEMORY_HARNESS" in out.stderr
        assert "Traceback" not in out.stderr


def test_argument_shapes_and_output_bound() -> None:
    """8.3 #105 non-object arguments; #108 responses over 1 MiB are refused, not truncated."""
    tools = MemoryTools(env={"ECC_MEMORY_HARNESS": "claude"})
    for bad in (False, 0, "", []):
        with pytest.raises(ToolCallError, match="Invalid arguments for memory_search"):
            tools.validate("memory_search", bad)
    with pytest.raises(ToolCallError, match="Unknown or missing memory tool"):
        tools.validate("memory_delete", {})
    with pytest.raises(ToolCallError, match=r"/limit minimum"):
        tools.validate("memory_search", {"limit": 0})
    with pytest.raises(ToolCallError, match="bounded output limit"):
        render({"text": "x" * (1024 * 1024 + 1)})


def test_server_module_is_not_imported_by_cli() -> None:
    """`import mcp` is slow: the ecc CLI's memory path must not load it."""
    code = "import sys, ecc.cli.memory_cmd, ecc.vault.service; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert shutil.which(SERVER) or Path(SERVER).exists()
