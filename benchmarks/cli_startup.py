"""Median whole-process wall time of ``ecc --version`` and ``ecc plugins --json``.

Usage: python benchmarks/cli_startup.py [--runs N]   (default 10 runs each, after a warm-up)
Target: ``ecc --version`` under 80 ms on a 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import ecc_executable, time_command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    ecc = ecc_executable()
    baseline = time_command([sys.executable, "-c", "pass"], args.runs)
    print(f"python -c pass (interpreter baseline): {baseline:7.1f} ms (median of {args.runs})")
    for argv in (["--version"], ["plugins", "--json"], ["config", "show", "--json"]):
        median = time_command([ecc, *argv], args.runs)
        print(f"ecc {' '.join(argv):<30} {median:7.1f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
