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
    """Create ``path`` and every missing level above it with mode 0700; return it.

    ecc's directories hold private data (config, sessions, agents' output, worktrees of the
    user's code, logs), so nothing ecc creates may be 0755, even ``~/.local/share`` when ecc is
    the first to need it. A umask can only take bits away from 0700. Existing levels are left as
    they are (one ``mkdir`` when the directory exists, as ``Path.mkdir`` costs): see
    :func:`make_private`.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not path.is_dir():
            raise
    except FileNotFoundError:
        if path.parent == path:
            raise
        ensure_private_dir(path.parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # made by a concurrent ecc in the meantime
            if not path.is_dir():
                raise
    return path


def make_private(path: Path) -> None:
    """Take group and other access away from one of ecc's existing directories or files.

    For what an older ecc or a loose umask left 0755/0644. Called where ecc writes into its own
    places (``ecc config set --user``, a new worktree), never on a hot path. Best effort: a path
    that is missing, not the user's or on a read-only file system is left alone.
    """
    try:
        info = os.stat(path)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, info.st_mode & 0o7700)
    except OSError:
        pass


def replace_file(target: Path, data: bytes, *, private: bool) -> None:
    """Replace ``target`` with ``data`` atomically: a reader sees the old file or the new one,
    and a failed write leaves the old one and no temp file.

    A private file (``private=True``) is 0600 whatever the umask, even when it replaces a looser
    one; any other file keeps the mode of the file it replaces (a new one gets the umask's).
    """
    mode: int | None = 0o600
    if not private:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # also for a stale temp file of an older ecc
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
