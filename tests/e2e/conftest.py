"""Fixtures for the end-to-end tests: the installed CLIs and a stub model server per test.

The CLIs are installed by ``make e2e`` (``tests/e2e/install_clis.sh``). Run outside it without
them, these tests skip; with ``ECC_E2E_REQUIRED=1`` (set by ``make e2e``) a missing CLI fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import clis
from stub_server import StubServer


@pytest.fixture(scope="session")
def cli_bin() -> Path:
    found = clis.bin_dir()
    if found is None:
        if os.environ.get("ECC_E2E_REQUIRED") == "1":
            pytest.fail(f"harness CLIs are not installed in {clis.cache_dir()}")
        pytest.skip("harness CLIs not installed (run `make e2e`, which installs them)")
    return found


@pytest.fixture
def stub(tmp_path: Path):
    server = StubServer(tmp_path / "stub-requests.jsonl").start()
    try:
        yield server
    finally:
        server.stop()
