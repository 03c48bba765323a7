"""``--json`` output never hands a terminal a raw control, bidi or invisible format character.

Agent output and memory files are untrusted; JSON is printed to the same terminal as human
output, so every such character is written as a ``\\uXXXX`` escape. The output stays valid JSON
that decodes to exactly the original text.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ecc.runtime.terminal import json_text
from tests.conftest import ECC

ESC, CSI, RLO = "\x1b", "\x9b", "\u202e"
# Every character class the escaping covers, one or more of each.
RISKY = (
    "\x00\x07\x08\x1b\x7f"  # C0 controls and DEL
    "\x80\x85\x90\x9b\x9c\x9d\x9f"  # C1 controls (CSI, ST, OSC, ...)
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # bidi
    "\u00ad\u200b\u200c\u200d\u2060\u2064\ufeff\ufff9"  # invisible format characters
    "\u2028\u2029"  # line and paragraph separators
    "\U000e0001\U000e0041\U000e007f"  # tag characters (invisible ASCII look-alikes)
    "\udc9b"  # a lone surrogate (an undecodable file-name byte)
)


def _raw_risky(text: str) -> list[str]:
    """The risky code points that appear unescaped in ``text``, as U+XXXX names."""
    return [f"U+{ord(ch):04X}" for ch in text if ch in RISKY and ch not in "\n"]


@pytest.mark.parametrize("char", list(RISKY))
def test_json_text_escapes_each_risky_character(char: str) -> None:
    payload = {"k" + char: ["before" + char + "after"]}
    text = json_text(payload)
    assert _raw_risky(text) == []
    assert json.loads(text) == payload


def test_json_text_keeps_ordinary_text_readable_and_valid() -> None:
    payload = {"title": "Café ✓ 中文 — ok", "n": 3, "lines": "one\ntwo\tthree", "none": None}
    text = json_text(payload)
    assert "Café ✓ 中文 — ok" in text  # not \u-escaped: ensure_ascii stays off
    assert json.loads(text) == payload
    assert json_text(payload, indent=None) == json.dumps(payload, ensure_ascii=False)


def _ecc_bytes(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*ECC, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=dict(os.environ),
        timeout=60,
    )


def _json_out(result: subprocess.CompletedProcess) -> tuple[str, object]:
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    text = result.stdout.decode("utf-8")
    return text, json.loads(text)


def test_memory_json_outputs_escape_bidi_and_hostile_file_names(git_repo: Path) -> None:
    # Bodies may carry bidi marks and zero-width characters (the vault refuses only the
    # overrides and C1); search (the fast path) and read must not print them raw.
    body = "plain \u200fmarked\u061c and\u200b hidden\u2028 end"
    args = ("memory", "save", "--title", "Escapes probe", "--stdin", "--json")
    saved = _ecc_bytes(*args, cwd=git_repo, stdin=body.encode())
    _, ack = _json_out(saved)
    memory_id = ack["memory"]["id"]  # type: ignore[index]
    text, found = _json_out(_ecc_bytes("memory", "search", "probe", "--json", cwd=git_repo))
    assert _raw_risky(text) == []
    assert found["results"][0]["memory"]["id"] == memory_id  # type: ignore[index]
    text, read = _json_out(_ecc_bytes("memory", "read", memory_id, "--json", cwd=git_repo))
    assert _raw_risky(text) == []
    assert read["memory"]["body"] == body  # type: ignore[index]

    # A file whose name carries CSI, RLO and ESC (a teammate's commit, say) reaches doctor.
    hostile = f"x{CSI}2J{RLO}y{ESC}[31m.md"
    (git_repo / ".ecc/memory/project/notes" / hostile).write_text("not a memory\n")
    text, report = _json_out(_ecc_bytes("memory", "doctor", "--json", cwd=git_repo))
    assert _raw_risky(text) == []
    assert report["invalidFiles"][0]["path"] == f"project:notes/{hostile}"  # type: ignore[index]


def test_session_json_outputs_escape_agent_output(tmp_path: Path) -> None:
    # The harness prints CSI, RLO and ESC; every --json view of its output escapes them.
    line = f"a{CSI}2J{RLO}b{ESC}[31mc"
    task = "printf 'a\\302\\2332J\\342\\200\\256b\\033[31mc\\n'"
    text, session = _json_out(
        _ecc_bytes("run", "--harness", "shell", "--no-worktree", "--json", task, cwd=tmp_path)
    )
    assert _raw_risky(text) == []
    session_id = session["id"]  # type: ignore[index]
    text, rows = _json_out(_ecc_bytes("logs", session_id, "--json", cwd=tmp_path))
    assert _raw_risky(text) == [] and rows[0]["line"] == line  # type: ignore[index]
    followed = _ecc_bytes("logs", session_id, "--json", "--follow", cwd=tmp_path)
    assert followed.returncode == 0, followed.stderr
    streamed = followed.stdout.decode("utf-8")
    assert _raw_risky(streamed) == []
    assert json.loads(streamed.splitlines()[0])["line"] == line
