"""OpenTelemetry export tests reuse the session fixtures: each test runs on SQLite and on
PostgreSQL, with fast heartbeats, and every process a test started is killed at its end."""

from tests.sessions.conftest import session_env, store, store_kind  # noqa: F401 (fixtures)
