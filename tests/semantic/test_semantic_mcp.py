"""``memory_search`` of ``ecc-memory-mcp``, driven by the MCP SDK's stdio client, re-ranked by
the semantic plugin when ``[memory] ranker`` names it, and exact otherwise."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import git
from tests.semantic.test_semantic_search import MEMORIES, QUERY, TITLES, save

SERVER = str(Path(sys.executable).with_name("ecc-memory-mcp"))


def found(repo: Path) -> list[dict]:
    params = StdioServerParameters(
        command=SERVER, env={**os.environ, "ECC_MEMORY_HARNESS": "claude"}, cwd=str(repo)
    )
    results: list[dict] = []

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            answer = await client.call_tool("memory_search", {"query": QUERY, "limit": 10})
            assert not answer.is_error, answer
            results.extend(json.loads(answer.content[0].text)["results"])

    anyio.run(main)
    return results


def test_memory_search_is_re_ranked_when_the_config_says_so(
    tmp_path: Path, isolated_env: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for title, body in MEMORIES.values():
        save(repo, title, body)

    exact = found(repo)
    assert {TITLES[item["memory"]["title"]] for item in exact} == {"ci", "deploy"}
    assert all("similarity" not in item for item in exact)

    config = isolated_env / ".config" / "ecc" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[memory]\nranker = "semantic"\n', encoding="utf-8")
    ranked = found(repo)
    assert {TITLES[item["memory"]["title"]] for item in ranked[:2]} == {"auth", "login"}
    assert all(isinstance(item["similarity"], float) for item in ranked)
