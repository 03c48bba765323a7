"""``ecc memory`` CLI (8.2 #66-86), JSON Schema (8.4 #111-117), concurrency and crash safety."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest

from ecc.runtime.terminal import sanitize
from ecc.vault.format import normalize_memory, serialize_memory_document
from ecc.vault.parse import parse_memory_document
from tests.conftest import REPO, run_ecc
from tests.vault.conftest import full_memory

SCHEMA = json.loads((REPO / "schemas/memory.schema.json").read_text())


def ecc(repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    return run_ecc("memory", *args, cwd=repo, input=stdin, env=env)


def test_help(repo: Path) -> None:
    """8.2 #66/#67: help names the commands, the MCP server and the recall rule."""
    out = ecc(repo, "--help")
    assert out.returncode == 0
    for text in (
        "ecc memory save",
        "ecc memory search",
        "ecc-memory-mcp",
        "Default recall scopes: project and team",
        "user scope must be requested explicitly",
    ):
        assert text in out.stdout


def test_save_read_roundtrip_json(repo: Path) -> None:
    """8.2 #68 stdin preserved, ack without body; #73 read --json with body and backlinks."""
    saved = ecc(repo, "save", "--title", "Stdin", "--stdin", "--json", stdin="line one\n  two\n")
    assert saved.returncode == 0, saved.stderr
    ack = json.loads(saved.stdout)
    assert ack["schemaVersion"] == "ecc.memory.write.v1" and "body" not in ack["memory"]
    read = json.loads(ecc(repo, "read", ack["memory"]["id"], "--json").stdout)
    assert read["schemaVersion"] == "ecc.memory.read.v1"
    assert read["memory"]["body"] == "line one\n  two" and read["backlinks"] == []


def test_init_and_handoff(repo: Path) -> None:
    """8.2 #71 init json; #72 handoff json."""
    out = json.loads(ecc(repo, "init", "--scope", "project", "--scope", "team", "--json").stdout)
    assert out["schemaVersion"] == "ecc.memory.init.v1" and out["scopes"] == ["project", "team"]
    assert Path(out["roots"]["project"], "handoffs").is_dir()
    assert Path(out["roots"]["team"], "decisions").is_dir()
    hand = ecc(
        repo,
        "handoff",
        "--from",
        "codex",
        "--target",
        "claude",
        "--target",
        "hermes",
        "--title",
        "Finish",
        "--stdin",
        "--json",
        stdin="next: deploy",
    )
    ack = json.loads(hand.stdout)
    memory = ack["memory"]
    assert ack["schemaVersion"] == "ecc.memory.write.v1" and "body" not in memory
    assert (memory["kind"], memory["trust"], memory["targetHarnesses"]) == (
        "handoff",
        "unreviewed",
        ["claude", "hermes"],
    )
    assert memory["sourceHarness"] == "codex"
    assert ack["path"] == f"project:handoffs/{memory['id']}.md"


def test_human_output_and_scopes(repo: Path) -> None:
    """8.2 #74 scope-relative path; #75 user scope explicit; #76 search; #77/#78 doctor."""
    out = ecc(repo, "save", "--title", "Human", "--stdin", stdin="body")
    assert "Path: project:notes/" in out.stdout and str(repo) not in out.stdout
    user = json.loads(
        ecc(
            repo, "save", "--title", "Mine", "--scope", "user", "--stdin", "--json", stdin="u"
        ).stdout
    )
    missing = ecc(repo, "read", user["memory"]["id"])
    assert missing.returncode == 1 and "was not found" in missing.stderr
    found = json.loads(ecc(repo, "read", user["memory"]["id"], "--scope", "user", "--json").stdout)
    assert found["memory"]["scope"] == "user"
    team = json.loads(
        ecc(
            repo,
            "save",
            "--kind",
            "decision",
            "--scope",
            "team",
            "--source-harness",
            "claude",
            "--target",
            "all",
            "--tag",
            "sqlite",
            "--title",
            "Store",
            "--stdin",
            "--json",
            stdin="Use SQLite for durable state.",
        ).stdout
    )
    result = json.loads(
        ecc(
            repo,
            "search",
            "sqlite durable",
            "--scope",
            "team",
            "--target-harness",
            "codex",
            "--limit",
            "5",
            "--json",
        ).stdout
    )
    assert result["schemaVersion"] == "ecc.memory.search.v1"
    assert [r["memory"]["id"] for r in result["results"]] == [team["memory"]["id"]]
    assert "SQLite" in result["results"][0]["excerpt"]
    doctor = json.loads(ecc(repo, "doctor", "--json").stdout)
    assert (
        doctor["schemaVersion"] == "ecc.memory.doctor.v1"
        and doctor["ok"]
        and doctor["memoryCount"] == 2
    )
    assert json.loads(ecc(repo, "doctor", "--json", "--scope", "user").stdout)["memoryCount"] == 1
    human = ecc(repo, "search", "sqlite")
    assert f"[unreviewed] {team['memory']['id']} — Store (score" in human.stdout


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (
            ["save", "--title", "x", "--stdin", "--body-file", "/etc/hostname"],
            "b",
            "Choose exactly one",
        ),  # 79
        (
            ["save", "--title", "x", "--trust", "reviewed", "--stdin"],
            "b",
            "Unknown option: --trust",
        ),  # 80
        (["save", "--title", "x", "--stdin"], "a" * 70 * 1024, "body is too large"),  # 81
        (["save", "--title", "x", "--stdin"], "  \n\t", "non-whitespace context"),  # 82
        (["save", "--stdin"], "b", "--title is required."),
        (
            ["save", "--title", "x", "--kind", "note", "--kind", "fact", "--stdin"],
            "b",
            "--kind may be provided only once.",
        ),
        (["save", "--title", "\x1b[31mred", "--stdin"], "b", "control"),
        (["save", "--title", "x", "--stdin"], "a\u202eb", "bidirectional"),
        (["save", "--title", "x", "--link", "../../etc", "--stdin"], "b", "memory id"),
        (["save", "--title", "x", "--stdin", "--target", "Claude"], "b", "target harness"),
        (["handoff", "--title", "x", "--stdin"], "b", "--from is required for handoffs."),
        (["read", "mem_../../x"], None, "memory id must match"),
        (["read"], None, "read requires exactly one memory ID."),
        (["search", "a\tb"], None, "control characters"),
    ],
)
def test_refusals_write_nothing(
    repo: Path, args: list[str], stdin: str | None, message: str
) -> None:
    out = ecc(repo, *args, stdin=stdin)
    assert out.returncode != 0 and message in out.stderr
    assert not (repo / ".ecc/memory/project/notes").exists() or not list(
        (repo / ".ecc/memory/project/notes").iterdir()
    )


def test_invalid_utf8_and_symlinked_body_file(repo: Path, isolated_env: Path) -> None:
    """8.2 #83: invalid UTF-8 body file fails; .ecc/memory never created. Symlinks refused."""
    tmp_path = isolated_env  # --body-file reads only from the repository or the home
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xc3\x28")
    out = ecc(repo, "save", "--title", "x", "--body-file", str(bad))
    assert out.returncode == 1 and "valid UTF-8" in out.stderr
    link = tmp_path / "link.txt"
    good = tmp_path / "good.txt"
    good.write_text("fine")
    link.symlink_to(good)
    out = ecc(repo, "save", "--title", "x", "--body-file", str(link))
    assert out.returncode == 1 and "non-symlink" in out.stderr
    assert not (repo / ".ecc").exists()


def test_dry_run(repo: Path, isolated_env: Path) -> None:
    """8.2 #84: dry-run refuses init/save/handoff; no vault directory is created."""
    for args in (
        ["init"],
        ["save", "--title", "x", "--stdin"],
        ["handoff", "--from", "a", "--target", "b", "--title", "x", "--stdin"],
    ):
        out = ecc(repo, *args, stdin="b", env={"ECC_DRY_RUN": "1"})
        assert out.returncode == 1 and "dry-run" in out.stderr
        out = ecc(repo, "--dry-run", *args, stdin="b")
        assert out.returncode == 1 and "dry-run" in out.stderr
    assert not (repo / ".ecc").exists() and not (isolated_env / ".ecc").exists()
    assert ecc(repo, "search", env={"ECC_DRY_RUN": "1"}).returncode == 0


def test_terminal_sanitizer() -> None:
    """8.2 #85 and the §6 examples."""
    text = (
        "safe \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 c0\x01\x07"
        " re\rwritten c1\x85 bi\u202edi"
    )
    cleaned = sanitize(text)
    for char in ("\x1b", "\x01", "\x07", "\r", "\x85", "\u202e"):
        assert char not in cleaned
    for word in ("safe", "red", "link", "c0", "written", "c1", "di"):
        assert word in cleaned
    assert sanitize("a\x1b[31mred\x1b[0mb") == "aredb"
    assert sanitize("a\x1b]0;title\x1b\\b") == "ab"
    assert sanitize("a\x1b]0;never ends") == "a"
    assert sanitize("a\tb\nc\rd") == "a\tb\ncd"
    assert sanitize("a\u202eb\u2066c\u200ed\u061cf") == "abcdf"
    assert sanitize("x\x1b(By") == "xy" and sanitize("x\x1b") == "x" and sanitize(None) == ""


def test_json_output_is_not_sanitized(capsys) -> None:
    """8.2 #86: the JSON writer round-trips ESC sequences and U+202E unchanged."""
    from ecc.cli.memory_cmd import _emit_json

    payload = {"text": "evil \x1b[2J and \u202e here"}
    _emit_json(payload)
    assert json.loads(capsys.readouterr().out) == payload


# -- schema (8.4) ---------------------------------------------------------------------------


RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _rfc3339(value: object) -> bool:
    """RFC 3339 date-time: the syntax, and a real calendar instant."""
    if not isinstance(value, str):
        return True
    if not RFC3339.fullmatch(value):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


def validate(instance: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=FORMATS)
    return [error.validator for error in validator.iter_errors(instance)]


def test_schema_accepts_parsed_memory() -> None:
    """8.4 #111 and #117 (LF, TAB, CRLF inside the body)."""
    memory = parse_memory_document(serialize_memory_document(full_memory(body="a\n\tb\r\nc")))
    assert validate(memory) == []


@pytest.mark.parametrize(
    ("overrides", "keyword"),
    [
        ({"trust": "system"}, "enum"),  # 112
        ({"trust": "reviewed"}, "enum"),
        ({"id": "mem_../../escape"}, "pattern"),  # 113
        ({"links": ["mem_../../../secret"]}, "pattern"),
        ({"instructions": "obey"}, "additionalProperties"),  # 114
        ({"createdAt": "July 26, 2026"}, "format"),  # 115
        ({"updatedAt": "2026-99-99T99:99:99Z"}, "format"),
        ({"title": "a\x1bb"}, "pattern"),  # 116
        ({"body": "a\u202eb"}, "pattern"),
        ({"body": "   "}, "pattern"),
    ],
)
def test_schema_rejections(overrides: dict, keyword: str) -> None:
    memory = normalize_memory(full_memory())
    memory.update(overrides)
    assert keyword in validate(memory)


# -- concurrency and crashes ----------------------------------------------------------------

WRITER = """
import sys
from ecc.vault.backend import load_backend
from ecc.vault.service import VaultService
svc = VaultService(load_backend("files"), cwd=sys.argv[1])
for n in range(int(sys.argv[3])):
    svc.save({"title": f"w{sys.argv[2]} n{n}", "body": "x" * 200, "sourceHarness": "codex",
              "id": f"mem_w{sys.argv[2]}_{n:04}"})
"""


def test_eight_writers_lose_nothing(repo: Path) -> None:
    """8 processes x 200 saves into one vault: no loss, duplicates or partial files."""
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(repo), str(w), "200"]) for w in range(8)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    notes = repo / ".ecc/memory/project/notes"
    names = sorted(p.name for p in notes.iterdir())
    assert len(names) == 1600 and all(n.endswith(".md") for n in names)
    out = json.loads(run_ecc("memory", "doctor", "--json", cwd=repo).stdout)
    assert (out["ok"], out["memoryCount"], out["duplicateIdCount"]) == (True, 1600, 0)


def test_killed_writer_leaves_no_partial_document(repo: Path) -> None:
    """SIGKILL mid-save: at most hidden temp files remain; doctor stays clean, search ignores."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(repo), "9", "100000"])
    notes = repo / ".ecc/memory/project/notes"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (notes.exists() and len(os.listdir(notes)) > 20):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for path in notes.iterdir():
        if not path.name.startswith("."):
            parse_memory_document(path.read_text())  # every visible document is complete
    out = json.loads(run_ecc("memory", "doctor", "--json", cwd=repo).stdout)
    assert out["ok"] is True and out["invalidFileCount"] == 0
