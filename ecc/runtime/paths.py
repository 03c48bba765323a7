"""Where ecc keeps its files, by platform convention (platformdirs).

Each location can be moved with an environment variable, which tests and operators use to keep
state apart: ``ECC_CONFIG_DIR``, ``ECC_STATE_DIR``, ``ECC_DATA_DIR``, ``ECC_CACHE_DIR``.

Every location has a text form (:func:`directory`, the ``*_location`` functions) that the hot
paths join with ``os.path``: ``ecc hook`` runs before every tool call, and importing ``pathlib``
(which brings ``urllib.parse`` and ``ipaddress``) is about 7 ms of it. The ``Path`` forms are
those texts as ``Path``; this module imports ``pathlib`` only when one is asked for. Nor does a
short process import platformdirs when an earlier one left its answers for the same inputs
(:mod:`ecc.runtime.dirmemo`).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing and pathlib stay unimported on the hot paths
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, TypeVar

    P = TypeVar("P", str, Path)

APP_NAME = "ecc"
KINDS = ("config", "state", "data", "cache")


def directory(kind: str) -> str:
    """ecc's ``kind`` directory (config, state, data or cache) as text: ``ECC_<KIND>_DIR``
    when set, else the platform's."""
    override = os.environ.get(f"ECC_{kind.upper()}_DIR")
    if override:
        return os.path.expanduser(override)
    if "platformdirs" not in sys.modules:
        return _first_lookup(kind)
    import platformdirs

    return _platform_directory(platformdirs, kind)


def _first_lookup(kind: str) -> str:
    """A process's first lookup: what an earlier process found for the same inputs, else
    platformdirs' answers for every kind, left for the next process."""
    from ecc.runtime import dirmemo

    remembered = dirmemo.read(KINDS)
    if remembered is not None:
        return remembered[kind]
    import platformdirs

    found = {kind: _platform_directory(platformdirs, kind)}  # its error is the caller's
    try:
        found.update((name, _platform_directory(platformdirs, name)) for name in KINDS)
    except Exception:  # another kind's trouble is for whoever asks for it
        return found[kind]
    dirmemo.write(found)
    return found[kind]


def _platform_directory(platformdirs: Any, kind: str) -> str:
    return str(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))


def pinned_environment() -> dict[str, str]:
    """``ECC_<KIND>_DIR`` for every kind, as this process found them.

    A child started with these finds the same directories without importing platformdirs
    (which brings pathlib and tempfile): ``ecc run`` gives them to the harness, whose
    ``ecc hook`` runs before every tool call and would otherwise spend about 20 ms a call on it.
    """
    return {f"ECC_{kind.upper()}_DIR": directory(kind) for kind in KINDS}


def _dir(kind: str) -> Path:
    from pathlib import Path

    return Path(directory(kind))


def config_dir() -> Path:
    return _dir("config")


def state_dir() -> Path:
    return _dir("state")


def data_dir() -> Path:
    return _dir("data")


def cache_dir() -> Path:
    return _dir("cache")


def user_config_location() -> str:
    return os.path.join(directory("config"), "config.toml")


def user_config_file() -> Path:
    from pathlib import Path

    return Path(user_config_location())


def project_root_location(start: str | os.PathLike[str] | None = None) -> str | None:
    """The nearest ancestor of ``start`` (default: the working directory), resolved, holding
    ``.git``."""
    here = os.path.realpath(start or os.getcwd())
    while True:
        if _exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _exists(location: str) -> bool:
    """As ``Path.exists``: nothing there is False, a refusal to look (EACCES...) raises."""
    import errno

    try:
        os.stat(location)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        if exc.errno in (errno.EBADF, errno.ELOOP):
            return False
        raise
    except ValueError:  # an embedded NUL
        return False
    return True


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """:func:`project_root_location` as a ``Path``."""
    root = project_root_location(start)
    if root is None:
        return None
    from pathlib import Path

    return Path(root)


def project_config_location(start: str | os.PathLike[str] | None = None) -> str | None:
    root = project_root_location(start)
    return os.path.join(root, ".ecc", "config.toml") if root else None


def project_config_file(start: str | os.PathLike[str] | None = None) -> Path | None:
    found = project_config_location(start)
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def ensure_private_dir(path: P) -> P:
    """Create ``path`` (a ``Path`` or text) and every missing level above it with mode 0700;
    return it.

    ecc's directories hold private data (config, sessions, agents' output, worktrees of the
    user's code, logs), so nothing ecc creates may be 0755, even ``~/.local/share`` when ecc is
    the first to need it. A umask can only take bits away from 0700. Existing levels are left as
    they are (one ``mkdir`` when the directory exists, as ``Path.mkdir`` costs): see
    :func:`make_private`.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
    except FileNotFoundError:
        parent = os.path.dirname(os.fspath(path).rstrip(os.sep) or os.sep) or os.curdir
        if parent == os.fspath(path):
            raise
        ensure_private_dir(parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:  # made by a concurrent ecc in the meantime
            if not os.path.isdir(path):
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
