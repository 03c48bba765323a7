"""Shared timing helpers for the benchmark scripts (whole-process wall time, medians)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def ecc_executable() -> str:
    """The installed ``ecc`` console script next to this interpreter."""
    candidate = VENV_BIN / "ecc"
    return str(candidate) if candidate.exists() else "ecc"


def time_command(argv: list[str], runs: int, env: dict[str, str] | None = None, **kw) -> float:
    """Median wall time in milliseconds of ``runs`` runs of ``argv`` (after one warm-up run)."""
    full_env = {**os.environ, **(env or {})}
    subprocess.run(argv, env=full_env, capture_output=True, check=True, **kw)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=full_env, capture_output=True, check=True, **kw)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)
