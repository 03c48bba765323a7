"""Where ecc keeps its files, by platform convention (platformdirs).

Each location can be moved with an environment variable, which tests and operators use to keep
state apart: ``ECC_CONFIG_DIR``, ``ECC_STATE_DIR``, ``ECC_DATA_DIR``, ``ECC_CACHE_DIR``.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "ecc"


def _dir(env: str, kind: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


def config_dir() -> Path:
    return _dir("ECC_CONFIG_DIR", "config")


def state_dir() -> Path:
    return _dir("ECC_STATE_DIR", "state")


def data_dir() -> Path:
    return _dir("ECC_DATA_DIR", "data")


def cache_dir() -> Path:
    return _dir("ECC_CACHE_DIR", "cache")


def user_config_file() -> Path:
    return config_dir() / "config.toml"


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest ancestor of ``start`` (default: the working directory) holding ``.git``."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_config_file(start: Path | None = None) -> Path | None:
    root = find_project_root(start)
    return root / ".ecc" / "config.toml" if root else None


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 for the leaf; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def sha256_hex(text: str) -> str:
    """The SHA-256 of ``text`` (UTF-8; undecodable file-name bytes kept) in hex: cache file
    names and other stable keys.

    Like the standard library's ``random``, it tries the interpreter's built-in module first:
    ``import hashlib`` loads OpenSSL (about 3 ms), paid by every short-lived command that names
    a cache file. The digest is the same either way.
    """
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11
    except ImportError:
        from hashlib import sha256
    return str(sha256(text.encode("utf-8", "surrogateescape")).hexdigest())
