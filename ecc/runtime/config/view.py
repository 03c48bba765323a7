"""A validated configuration without importing pydantic: for the hot paths.

``ecc hook`` runs on every tool call an agent makes and ``ecc memory search`` is an agent's
recall; both must answer in tens of milliseconds, while importing pydantic and building the
models of ``ecc.runtime.config.model`` costs over 100 ms. This module keeps the *validated*
effective configuration as JSON in the start-up cache (:mod:`ecc.runtime.startcache`), keyed by
what it was built from (the layer files' identity, the project file's content digest and the
trust store's, which decide what of the project file applies, the ``ECC__*`` variables and the
``-c`` overrides) and the config model's own files. A hit returns a read-only attribute view of
that JSON; a miss (or any doubt) goes through the full pydantic load and refreshes the cache.
Deleting the cache changes nothing but speed. The view is the one configuration type the runtime
passes around: to every hook, every executor and the session runner, whichever executor placed
it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping

from ecc import __version__
from ecc.runtime import paths, startcache
from ecc.runtime.config import overrides as cli_overrides
from ecc.runtime.config import trust

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class ConfigView(Mapping):  # Mapping[str, Any] to a type checker; typing stays unimported
    """Read-only view of a config table: ``view.risk.block`` and ``view["risk"]["block"]``."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ConfigView({self._data!r})"

    def to_json(self) -> str:
        """The table as JSON text: a key for what is derived from this configuration."""
        return json.dumps(self._data)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())


def _wrap(value: Any) -> Any:
    return ConfigView(value) if isinstance(value, dict) else value


def _stat_key(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_ino, st.st_size, st.st_mtime_ns]


# What gives the configuration its shape and decides what of a project file applies: a
# checkout that edits them (a new key, a new guard) without a new version number must not be
# handed a view the old code cached.
SCHEMA_FILES = tuple(
    os.path.join(os.path.dirname(__file__), name)
    for name in ("model.py", "sections.py", "guarded.py")
)


def _inputs(cwd: str | Path | None, overrides: tuple[str, ...]) -> tuple[str, list[Any]]:
    """(identity, fingerprint): which cache entry, and whether it is still current. Texts
    joined with ``os.path``: a warm hook never imports pathlib."""
    explicit = os.environ.get("ECC_CONFIG")
    project = paths.project_config_location(cwd)
    user = paths.user_config_location()
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("ECC__"))
    identity = json.dumps([__version__, user, str(project), explicit, env, overrides])
    files = [user, project, explicit or None]
    # trust is per content: the digest, not a stat a writer can restore, decides
    trusted = [trust.file_digest(project), _stat_key(trust.store_location())]
    schema = [_stat_key(p) for p in SCHEMA_FILES]
    return identity, [*(_stat_key(p) for p in files), *trusted, *schema]


def view(cwd: str | Path | None = None) -> ConfigView:
    """The effective configuration, validated, as a :class:`ConfigView` (``cwd``: where to
    look for the project file, default the working directory).

    Raises :class:`ecc.contract.errors.ConfigError` exactly as a full load would when the
    config is bad (a bad config is never cached).
    """
    overrides = cli_overrides.pairs()
    identity, fingerprint = _inputs(cwd, overrides)
    cached = startcache.read("config", identity)
    if cached is not None and cached.get("fingerprint") == fingerprint:
        _ignored[identity] = (fingerprint, cached.get("ignored") or [])
        return ConfigView(cached["config"])
    from ecc.runtime.config import model as full

    if cwd is None:
        loaded = full.current()
    else:
        from pathlib import Path

        loaded = full.load(cwd=Path(cwd), overrides=overrides)
    data = loaded.config.model_dump(mode="json")
    ignored = [item.as_dict() for item in loaded.ignored]
    startcache.write(
        "config", identity, {"fingerprint": fingerprint, "config": data, "ignored": ignored}
    )
    _ignored[identity] = (fingerprint, ignored)
    return ConfigView(data)


# identity -> (fingerprint, the untrusted project keys left out), as the last view() found them
_ignored: dict[str, tuple[list[Any], list[dict[str, str]]]] = {}


def ignored_notice(cwd: str | Path | None = None) -> str | None:
    """The warning line naming the project keys the effective configuration left out (the file
    is untrusted), or None; what :func:`view` found, so a warm ``ecc run -d`` stays fast."""
    identity, fingerprint = _inputs(cwd, cli_overrides.pairs())
    known = _ignored.get(identity)
    if known is None or known[0] != fingerprint:
        view(cwd)
        known = _ignored[identity]
    ignored = known[1]
    if not ignored:
        return None
    return trust.notice(ignored[0]["source"], [item["key"] for item in ignored])
