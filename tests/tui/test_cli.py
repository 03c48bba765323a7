"""``ecc dashboard`` on the command line: refusal without a terminal, help, import cost."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import run_ecc


def test_dashboard_needs_a_terminal():
    result = run_ecc("dashboard")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Error: ecc dashboard needs a terminal (use ecc sessions --json in scripts)"
    )


def test_bare_ecc_without_a_terminal_prints_help_listing_the_dashboard():
    result = run_ecc()
    assert result.returncode == 0
    assert re.search(r"^  dashboard +Watch and steer every session \(TUI\)\.$", result.stdout, re.M)


def test_other_commands_never_import_textual():
    code = (
        "import sys\n"
        "from ecc.cli.app import main\n"
        "for argv in (['sessions', '--json'], ['--help'], ['dashboard', '--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('textual' in sys.modules, 'ecc.tui.app' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False False"
