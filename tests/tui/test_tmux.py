"""A person's view: ``scripts/tui_capture.sh`` runs a bare ``ecc`` in tmux, presses keys, and
captures the pane (the same script produced the capture in docs/dashboard.md).

tmux comes from the system (``make test`` installs it when missing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_dashboard_in_a_real_terminal(tmp_path: Path):
    assert shutil.which("tmux"), "tmux is required: apt-get install -y tmux (make test does it)"
    out = tmp_path / "capture.md"
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "tui_capture.sh"), str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    screens = text.split("### ")[1:]
    assert len(screens) == 6
    opening, hostile, diff, merge, stop, filtered = screens
    assert "ecc dashboard — 1 running / 4 total" in opening
    assert "q Quit" in opening
    # agent output: markup shown as text, escape sequences gone (no title, no colour codes)
    assert "\n[bold red]not markup[/]\nno colour\n" in hostile
    assert "\x1b" not in text and "retitled" not in text
    assert "+ship it" in diff
    assert "Mergeable: clean" in merge and "1 commit(s) ahead, 0 behind" in merge
    assert "Stop session" in stop and "its process group" in stop
    assert "0 running / 4 total" in filtered
    assert "filter: state:stopped (1 shown)" in filtered
    assert re.findall(r"^ [0-9a-f]{12}  (\w+) ", filtered, re.MULTILINE) == ["stopped"]
    assert len(re.findall(r"^ [0-9a-f]{12}  ", opening, re.MULTILINE)) == 4
