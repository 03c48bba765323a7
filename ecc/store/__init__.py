"""The session store. Open one with :func:`ecc.store.open.open_store` (SQLite or PostgreSQL by
URL); type hints name :class:`ecc.store.base.Store`. This package imports nothing itself, so
neither sqlite3 nor psycopg is loaded before a dialect is chosen."""
