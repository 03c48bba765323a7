"""Lone surrogates, which the reference's MCP server accepts and writes (issue 23, item 3).

JSON can carry ``\\ud800`` alone; the reference keeps it in the title (its frontmatter holds the
escape ``\\ud800``, as ``JSON.stringify`` writes it) and writes U+FFFD for one in the body (Node's
UTF-8 encoder). ecc writes the same bytes and reads such a file as a valid document.
"""

from __future__ import annotations

import json
from pathlib import Path

from ecc.vault.format import serialize_memory_document
from ecc.vault.parse import parse_memory_document
from tests.conftest import run_ecc
from tests.vault.conftest import full_memory

LONE = "lone \ud800 sur"
ID = "mem_20260726_0123456789abcdef0123"


def _reference_document() -> str:
    """What the reference writes for a title holding a lone surrogate (ASCII escape)."""
    return (
        "---\n"
        'schema: "ecc.memory.v1"\n'
        f'id: "{ID}"\n'
        'title: "lone \\ud800 sur"\n'
        'kind: "note"\nscope: "project"\ntrust: "unreviewed"\nstatus: "active"\n'
        'source_harness: "claude"\ntarget_harnesses: ["all"]\ntags: []\nlinks: []\n'
        'created_at: "2026-07-26T10:00:00.000Z"\nupdated_at: "2026-07-26T10:00:00.000Z"\n'
        "---\n\nBody about surrogates\n"
    )


def test_format_round_trips_the_reference_bytes() -> None:
    text = _reference_document()
    memory = parse_memory_document(text)
    assert memory["title"] == LONE
    assert serialize_memory_document(memory) == text
    # a body's lone surrogate is written as U+FFFD (what Node's encoder writes)
    written = serialize_memory_document(full_memory(body="a \udc80 b"))
    assert written.endswith("\n\na \ufffd b\n")
    written.encode("utf-8")


def _seed(repo: Path) -> None:
    notes = repo / ".ecc/memory/project/notes"
    notes.mkdir(parents=True)
    (repo / ".ecc/memory/project/.gitignore").write_text("*\n!.gitignore\n")
    (notes / f"{ID}.md").write_text(_reference_document(), encoding="utf-8")


def test_cli_reads_searches_and_doctors_it(repo: Path) -> None:
    _seed(repo)
    doctor = json.loads(run_ecc("memory", "doctor", "--json", cwd=repo).stdout)
    assert (doctor["memoryCount"], doctor["invalidFileCount"]) == (1, 0)
    out = run_ecc("memory", "search", "surrogates", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert '"title": "lone \\ud800 sur"' in out.stdout  # escaped as JSON.stringify does
    (result,) = json.loads(out.stdout)["results"]
    assert result["memory"]["title"] == LONE
    human = run_ecc("memory", "search", "surrogates", cwd=repo)
    assert human.returncode == 0, human.stderr
    assert "lone \ufffd sur" in human.stdout  # a terminal gets U+FFFD, as from Node
    read = run_ecc("memory", "read", ID, "--json", cwd=repo)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["memory"]["title"] == LONE
    assert "lone \ufffd sur" in run_ecc("memory", "read", ID, cwd=repo).stdout


def test_service_saves_and_finds_it(service, repo: Path) -> None:
    """The MCP server's path: a title and a query holding lone surrogates are accepted."""
    saved = service.save(
        {"title": LONE, "body": "x \ud800 y", "kind": "note", "sourceHarness": "claude"}
    )
    text = Path(saved["file"]).read_text(encoding="utf-8")
    assert 'title: "lone \\ud800 sur"' in text and "\n\nx \ufffd y\n" in text
    found = service.search("lone \ud800")
    assert [r["memory"]["title"] for r in found["results"]] == [LONE]
    assert found["results"][0]["score"] == 20 + 8  # phrase in title, token "lone" in title
    assert service.read(saved["memory"]["id"])["memory"]["title"] == LONE
    assert service.doctor()["memoryCount"] == 1
