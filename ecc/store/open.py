"""Opening the session store: ``[store] url`` names SQLite or PostgreSQL, chosen here.

``sqlite:///PATH`` or a plain path opens :class:`ecc.store.sqlite.SqliteStore` (no URL at all:
``<state dir>/ecc.db``); ``postgresql://…`` opens :class:`ecc.store.postgres.PostgresStore`.
Each dialect is imported only when chosen, so a SQLite user never imports psycopg.
"""

from __future__ import annotations

from pathlib import Path

from ecc.store.base import StoreError, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike
    from typing import Any

    from ecc.store.base import Store


def default_path() -> Path:
    """Where the embedded store lives when ``[store] url`` is unset."""
    from ecc.runtime import paths

    return paths.state_dir() / "ecc.db"


def is_postgres_url(url: object) -> bool:
    return isinstance(url, str) and url.startswith(("postgresql://", "postgres://"))


def resolve_url(url: str | None) -> Path | str:
    """Map ``[store] url`` to a SQLite path or a PostgreSQL URL; refuse anything else."""
    if not url:
        return default_path()
    if is_postgres_url(url):
        return url
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite://") :]).expanduser()
    if "://" in url:
        raise StoreError(
            f"unsupported store url {redact(url)!r} (use sqlite:///PATH, a file path or "
            "postgresql://…)"
        )
    return Path(url).expanduser()


def open_store(url: str | PathLike[str] | None = None, *, config: Any = None) -> Store:
    """Open (creating and migrating when needed) the store ``url`` names, else the one of
    ``config`` (the validated view; the process's own when neither is given). A path
    (``Path``) is a SQLite file as it stands."""
    if url is None:
        if config is None:
            from ecc.runtime.config.view import view

            config = view()
        url = config.store.url
    target = resolve_url(url) if isinstance(url, str) or url is None else Path(url)
    if isinstance(target, str):
        from ecc.store.postgres import PostgresStore

        return PostgresStore(target)
    from ecc.store.sqlite import SqliteStore

    return SqliteStore(target)
