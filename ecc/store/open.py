"""Opening the session store: ``[store] url`` names SQLite or PostgreSQL, chosen here.

``sqlite:///PATH`` or a plain path opens :class:`ecc.store.sqlite.SqliteStore` (no URL at all:
``<state dir>/ecc.db``); ``postgresql://…`` opens :class:`ecc.store.postgres.PostgresStore`.
Each dialect is imported only when chosen, so a SQLite user never imports psycopg.
"""

from __future__ import annotations

import os

from ecc.store.base import StoreError, redact

TYPE_CHECKING = False  # typing and pathlib stay unimported: ecc hook opens a store on every call
if TYPE_CHECKING:
    from os import PathLike
    from pathlib import Path
    from typing import Any

    from ecc.store.base import Store


def default_location() -> str:
    """Where the embedded store lives when ``[store] url`` is unset."""
    from ecc.runtime import paths

    return os.path.join(paths.directory("state"), "ecc.db")


def default_path() -> Path:
    from pathlib import Path

    return Path(default_location())


def is_postgres_url(url: object) -> bool:
    return isinstance(url, str) and url.startswith(("postgresql://", "postgres://"))


def sqlite_location(url: str | None) -> str | None:
    """The SQLite file ``[store] url`` names, as text; None for a PostgreSQL URL; refuse
    anything else."""
    if not url:
        return default_location()
    if is_postgres_url(url):
        return None
    if url.startswith("sqlite:///"):
        return os.path.expanduser(url[len("sqlite://") :])
    if "://" in url:
        raise StoreError(
            f"unsupported store url {redact(url)!r} (use sqlite:///PATH, a file path or "
            "postgresql://…)"
        )
    return os.path.expanduser(url)


def resolve_url(url: str | None) -> Path | str:
    """Map ``[store] url`` to a SQLite path or a PostgreSQL URL; refuse anything else."""
    location = sqlite_location(url)
    if location is None:
        return str(url)
    from pathlib import Path

    return Path(location)


def open_store(url: str | PathLike[str] | None = None, *, config: Any = None) -> Store:
    """Open (creating and migrating when needed) the store ``url`` names, else the one of
    ``config`` (the validated view; the process's own when neither is given). A path
    (``Path``) is a SQLite file as it stands."""
    if url is None:
        if config is None:
            from ecc.runtime.config.view import view

            config = view()
        url = config.store.url
    location = sqlite_location(url) if isinstance(url, str) or url is None else os.fspath(url)
    if location is None:
        from ecc.store.postgres import PostgresStore

        return PostgresStore(str(url))
    from ecc.store.sqlite import SqliteStore

    return SqliteStore(location)
