"""Fixtures for the end-to-end tests: the installed CLIs and a stub model server per test.

The CLIs are installed by ``make e2e`` (``tests/e2e/install_clis.sh``). Run outside it without
them, these tests skip; with ``ECC_E2E_REQUIRED=1`` (set by ``make e2e``) a missing CLI fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
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


@pytest.fixture
def env_for(tmp_path: Path, cli_bin: Path, stub: StubServer) -> Callable[..., dict[str, str]]:
    """``make(harness, user_config="")``: the environment that runs ``harness`` against the stub,
    with an ecc user config (``ECC_CONFIG``) holding the profile ``e2e`` and ``user_config``."""

    def make(name: str, user_config: str = "") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k.startswith(("ECC_", "GIT_"))}
        env.pop("ECC_PLUGINS", None)
        env.update(clis.prepare(name, tmp_path / "harness-home", stub.url, cli_bin))
        config = tmp_path / "ecc.toml"
        config.write_text(
            f"{user_config}\n"
            "[agent_profiles.e2e]\n"
            'permission_mode = "bypassPermissions"\n'
            f'model = "{clis.STUB_MODEL[name]}"\n'
        )
        env["ECC_CONFIG"] = str(config)
        return env

    return make
