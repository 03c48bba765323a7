"""Temp files left by writers killed mid-save (issue 23, item 9).

A save writes ``.ecc-memory-<pid>-<hex>.tmp`` beside its destination and links it into place; a
writer SIGKILLed in between leaves the temp behind (hidden, so readers skip it). Doctor reports
them and ``doctor --fix-temp`` removes the stale ones: only ecc's temp-name pattern, only regular
files (never a symlink, never followed), only older than ten minutes (a live writer's temp is
younger than a second).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import run_ecc

# A real `ecc memory save`, held inside its fsync of the temp file until it is killed.
HELD_WRITER = """
import os, sys, time
def held(fd):
    print("holding", flush=True)
    time.sleep(60)
os.fsync = held
sys.argv = ["ecc", "memory", "save", "--scope", "team", "--title", "Killed", "--stdin"]
from ecc.entry import main
main()
"""


def _kill_a_writer_mid_save(repo: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", HELD_WRITER],
        cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write("a body that never lands\n")
    writer.stdin.close()
    assert writer.stdout.readline() == "holding\n"
    writer.send_signal(signal.SIGKILL)
    assert writer.wait(timeout=30) == -signal.SIGKILL
    writer.stdout.close()


def _doctor(repo: Path, *args: str) -> dict:
    out = run_ecc("memory", "doctor", "--scope", "team", "--json", *args, cwd=repo)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_doctor_reports_and_fix_temp_removes_stale_leftovers(repo: Path, tmp_path: Path) -> None:
    for _ in range(3):
        _kill_a_writer_mid_save(repo)
    notes = repo / ".ecc/memory/team/notes"
    temps = sorted(path.name for path in notes.iterdir())
    assert len(temps) == 3 and all(name.startswith(".ecc-memory-") for name in temps)

    report = _doctor(repo)
    assert (report["memoryCount"], report["invalidFileCount"]) == (0, 0)
    assert report["tempFileCount"] == 3
    assert report["tempFiles"] == [f"team:notes/{name}" for name in temps]
    human = run_ecc("memory", "doctor", "--scope", "team", cwd=repo).stdout
    assert "Leftover temp files: 3" in human and f"team:notes/{temps[0]}" in human

    # young leftovers may still be a live writer's: kept
    assert _doctor(repo, "--fix-temp")["removedTempFiles"] == []
    assert sorted(path.name for path in notes.iterdir()) == temps

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    old = time.time() - 3600
    decoys = {
        ".ecc-memory-123-00000000000000aa.tmp": "symlink",  # the pattern, but a symlink
        ".ecc-memory-notours.tmp": "file",  # not ecc's pattern
        "keep.tmp": "file",
    }
    for name, kind in decoys.items():
        if kind == "symlink":
            (notes / name).symlink_to(outside)
        else:
            (notes / name).write_text("x")
        os.utime(notes / name, (old, old), follow_symlinks=False)
    for name in temps:
        os.utime(notes / name, (old, old))

    fixed = _doctor(repo, "--fix-temp")
    assert fixed["removedTempFiles"] == [f"team:notes/{name}" for name in temps]
    assert fixed["tempFileCount"] == 0
    assert sorted(path.name for path in notes.iterdir()) == sorted(decoys)
    assert outside.read_text() == "keep me"
    saved = run_ecc("memory", "save", "--scope", "team", "--title", "After", "--stdin",
                    cwd=repo, input="body\n")  # fmt: skip
    assert saved.returncode == 0, saved.stderr
