"""Conflict tests reuse the session fixtures: fast heartbeats, and every process a test started
is killed at its end. The tests whose queries differ by dialect run on SQLite and on
PostgreSQL; those marked ``policy_only`` (what the daemon decides, the same SQL again) run on
SQLite alone, to keep the suite's time down."""

from __future__ import annotations

import pytest

from tests.sessions.conftest import STORE_KINDS, session_env, store  # noqa: F401 (fixtures)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "policy_only: run on the SQLite store alone")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_kind" in metafunc.fixturenames:
        policy_only = metafunc.definition.get_closest_marker("policy_only") is not None
        metafunc.parametrize("store_kind", ["sqlite"] if policy_only else STORE_KINDS)
