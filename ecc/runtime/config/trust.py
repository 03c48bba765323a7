"""Which project config files the user has approved: the trust store behind ``ecc trust``.

A repository's ``.ecc/config.toml`` arrives with the repository, so whoever can commit to it (or
an agent working in it) writes it. Its keys that run programs, loosen enforcement or redirect
output (:mod:`ecc.runtime.config.guarded`) apply only once the user has approved that exact
content, as direnv's ``allow`` does: the store maps the file's resolved path to the SHA-256 of
the bytes approved, so any change to the file makes it untrusted again.

The store is ``<data dir>/trust/trusted.json`` (``ECC_DATA_DIR`` moves it): the user's, outside
every repository (a store that would lie inside the repository being judged is never used),
written 0600 in a 0700 directory, atomically and under a lock so concurrent ``ecc trust`` calls
lose nothing. One a reader cannot rely on (unreadable, not JSON, writable by others, owned by
someone else) trusts nothing. A linked worktree's copy counts as trusted when it is byte for byte
the trusted file of the checkout it belongs to, so sessions in ecc's worktrees see what the user
approved. This module is read on the hot paths (the cached config view fingerprints the store):
it imports only ``os`` and ``json``.
"""

from __future__ import annotations

import json
import os

from ecc.contract.errors import ConfigError
from ecc.runtime import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

STORE_VERSION = 1


class Record:
    """One approval: the resolved path of a project file and the SHA-256 of its bytes."""

    __slots__ = ("path", "sha256", "trusted_at")

    def __init__(self, path: str, sha256: str, trusted_at: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.trusted_at = trusted_at

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256, "trusted_at": self.trusted_at}


def store_location() -> str:
    """Where the store is, as text (the hot paths' config fingerprint: no pathlib)."""
    return os.path.join(paths.directory("data"), "trust", "trusted.json")


def store_path() -> Path:
    from pathlib import Path

    return Path(store_location())


def digest(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex, from the interpreter's built-in module when it has one
    (``hashlib`` loads OpenSSL, a few milliseconds on every hook call)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # 3.12+
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def file_digest(path: str | Path | None) -> str | None:
    """The digest of the file at ``path``, or None when there is none (a cache fingerprint)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return digest(handle.read())
    except OSError:
        return None


def project_root_of(config_file: Path) -> Path:
    """The repository a project file belongs to: ``<root>/.ecc/config.toml``."""
    return config_file.parent.parent


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return True  # cannot tell: treat as inside, so nothing is trusted on its word


def _load(strict: bool) -> dict[str, dict[str, str]]:
    """The approvals on disk; ``strict`` raises :class:`ConfigError` where a reader gets {}."""
    location = store_path()
    try:
        fd = os.open(location, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if strict:
            raise ConfigError(f"trust store {location} is unreadable: {exc.strerror}") from None
        return {}
    try:
        info = os.fstat(fd)
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            raw = handle.read()
    finally:
        if fd >= 0:
            os.close(fd)
    problem = None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        problem = "is writable by others or not yours"
    else:
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        files = data.get("files") if isinstance(data, dict) else None
        if isinstance(files, dict) and all(
            isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
            for entry in files.values()
        ):
            return files
        problem = "is not a trust store ecc wrote"
    if strict:
        raise ConfigError(f"trust store {location} {problem}; remove it to start over")
    return {}


def _main_checkout_file(root: Path) -> Path | None:
    """For a linked worktree ``root``, the project file of the checkout it belongs to."""
    try:
        text = (root / ".git").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # a directory (a main checkout) or nothing readable
    if not text.startswith("gitdir:"):
        return None
    from pathlib import Path

    gitdir = Path(text[len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else root / gitdir
    try:
        back = Path((gitdir / "gitdir").read_text(encoding="utf-8").strip())
        common = Path((gitdir / "commondir").read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    common = (common if common.is_absolute() else gitdir / common).resolve()
    if back.resolve() != (root / ".git").resolve() or common.name != ".git":
        return None  # git keeps both links; a worktree it does not know of is not one
    return common.parent / ".ecc" / "config.toml"


def is_trusted(config_file: Path, data: bytes) -> bool:
    """Whether ``data``, read from the project file at resolved path ``config_file``, is the
    content the user approved there (or, in a linked worktree, in its main checkout)."""
    root = project_root_of(config_file)
    if _inside(store_path(), root):
        return False
    files = _load(strict=False)
    if not files:
        return False
    wanted = digest(data)
    entry = files.get(str(config_file))
    if entry is not None and entry.get("sha256") == wanted:
        return True
    main = _main_checkout_file(root)
    if main is None:
        return False
    entry = files.get(str(main))
    return entry is not None and entry.get("sha256") == wanted


def entries() -> list[Record]:
    """Every approval in the store, by path."""
    return [
        Record(path, entry["sha256"], str(entry.get("trusted_at", "")))
        for path, entry in sorted(_load(strict=True).items())
    ]


def record(config_file: Path, data: bytes | None = None) -> Record:
    """Approve ``data`` (default: the file's bytes now) for the project file ``config_file``."""
    config_file = config_file.resolve()
    root = project_root_of(config_file)
    if data is None:
        try:
            data = config_file.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {config_file}: {exc.strerror or exc}") from None
    if _inside(store_path(), root):
        raise ConfigError(
            f"the trust store {store_path()} is inside the repository {root}; "
            "point ECC_DATA_DIR outside it"
        )
    import time

    entry = Record(
        str(config_file), digest(data), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    )
    with _locked():
        files = _load(strict=True)
        files[entry.path] = {"sha256": entry.sha256, "trusted_at": entry.trusted_at}
        _write(files)
    return entry


def revoke(config_file: Path) -> bool:
    """Forget the approval of ``config_file``; False when there was none."""
    key = str(config_file.resolve())
    with _locked():
        files = _load(strict=True)
        if key not in files:
            return False
        del files[key]
        _write(files)
    return True


def _directory() -> Path:
    directory = store_path().parent
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    if directory.stat().st_mode & 0o077:
        directory.chmod(0o700)
    return directory


class _locked:
    """An exclusive lock on the store's directory for one read-modify-write."""

    def __enter__(self) -> None:
        import fcntl

        try:
            self._fd = os.open(_directory() / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot lock the trust store: {exc.strerror or exc}") from None
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)  # closing releases the lock


def _write(files: dict[str, dict[str, str]]) -> None:
    """Replace the store atomically: a reader sees the old store or the new one, never half."""
    target = store_path()
    directory = _directory()
    tmp = directory / f".{target.name}.{os.getpid()}.tmp"
    body = json.dumps({"version": STORE_VERSION, "files": files}, indent=2, sort_keys=True)
    try:
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(body.encode("utf-8") + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"cannot write the trust store {target}: {exc.strerror or exc}") from None


def notice(source: str, keys: list[str]) -> str:
    """The one line that says a project file's keys were ignored (direnv's "is blocked")."""
    shown = ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
    return (
        f"ecc: ignoring {len(keys)} key(s) of untrusted {source}: {shown}; review the file, "
        "then run `ecc trust` to apply them (`ecc config show --origin` says why)"
    )
