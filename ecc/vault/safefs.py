"""Filesystem primitives that never follow a symlink and never overwrite.

Vault files are written create-only: an exclusive, no-follow temp file in the destination
directory is filled, fsync'ed and hard-linked into place (``link`` fails if anything exists there,
even a dangling symlink), then the directory is fsync'ed so the new name survives a crash. Reads
open with ``O_NOFOLLOW | O_NONBLOCK`` and check that what was opened is what the path names.
Work below a root goes through directory file descriptors (``dir_fd=``), so swapping a parent
directory for a symlink during an operation cannot redirect it.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from ecc.contract.errors import EccError

READ_CHUNK = 65536
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class AlreadyExistsError(EccError):
    """Something already exists where a create-only write was going."""


class UnsafePathError(EccError):
    """A path failed a safety check (symlink, escape from the trusted root, identity change)."""


def same_file_identity(a: os.stat_result | object, b: os.stat_result | object) -> bool:
    """True if two stat results name the same file.

    Inodes are compared exactly (Python ints, so values beyond 2**53 stay distinct); a device
    of 0 or None on either side is treated as unknown (some Windows stat calls report 0).
    """
    ino_a, ino_b = getattr(a, "st_ino", None), getattr(b, "st_ino", None)
    if ino_a is None or ino_b is None or int(ino_a) != int(ino_b):
        return False
    dev_a, dev_b = getattr(a, "st_dev", 0) or 0, getattr(b, "st_dev", 0) or 0
    return dev_a == 0 or dev_b == 0 or int(dev_a) == int(dev_b)


def canonical_nearest_existing(path: str | os.PathLike[str]) -> str:
    """realpath of the nearest existing ancestor, with the missing tail re-appended.

    Raises OSError if the existing part cannot be resolved (a dangling or looping symlink).
    """
    absolute = os.path.abspath(os.fspath(path))
    tail: list[str] = []
    current = absolute
    while True:
        try:
            os.lstat(current)
            break
        except FileNotFoundError:
            pass
        except NotADirectoryError:
            pass
        parent = os.path.dirname(current)
        if parent == current:
            break
        tail.append(os.path.basename(current))
        current = parent
    resolved = os.path.realpath(current, strict=True)
    return os.path.join(resolved, *reversed(tail)) if tail else resolved


def is_within(target: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """True if ``target`` resolves inside ``root``; any resolution error counts as outside."""
    try:
        resolved_target = canonical_nearest_existing(target)
        resolved_root = canonical_nearest_existing(root)
    except (OSError, ValueError):
        return False
    relative = os.path.relpath(resolved_target, resolved_root)
    return relative == "." or not (
        relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative)
    )


def assert_within(target: str | os.PathLike[str] | None, root: str | None, action: str) -> None:
    """Refuse ``action`` unless ``target`` lies inside the trusted ``root``."""
    if not target:
        raise UnsafePathError(f"Refusing to {action}: missing destination path.")
    if not root:
        raise UnsafePathError(f"Refusing to {action} '{target}': no trusted install root resolved.")
    if not is_within(target, root):
        raise UnsafePathError(
            f"Refusing to {action} outside the install root: '{target}' is not within '{root}'."
        )


def make_private_dirs(path: Path) -> None:
    """Create every missing level of ``path`` with mode 0700 (existing ones are left alone)."""
    missing: list[Path] = []
    current = path
    while True:
        try:
            os.lstat(current)
            break
        except FileNotFoundError:
            missing.append(current)
            if current.parent == current:
                break
            current = current.parent
    for level in reversed(missing):
        try:
            os.mkdir(level, 0o700)
        except FileExistsError:
            pass


def open_dir(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> int:
    """Open a directory without following a symlink at its last component."""
    return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)


def ensure_subdir(parent_fd: int, name: str, *, label_path: str) -> int:
    """Create (0700) if missing and open ``name`` inside ``parent_fd``; refuse a symlink."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        return open_dir(name, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise UnsafePathError(
                    f"Refusing to access memory through symlink directory: {label_path}"
                ) from None
            raise UnsafePathError(f"Memory path is not a directory: {label_path}") from None
        raise


# The temp files of create_only: ".ecc-memory-<pid>-<16 hex>.tmp". A writer holds one for the
# time of a write and an fsync; one untouched for ten minutes was left by a killed writer.
TEMP_NAME_PREFIX = ".ecc-memory-"
STALE_TEMP_SECONDS = 600


def is_temp_name(name: str) -> bool:
    """True for the name of a temp file of :func:`create_only` (and nothing else)."""
    if not (name.startswith(TEMP_NAME_PREFIX) and name.endswith(".tmp")):
        return False
    pid, dash, digits = name[len(TEMP_NAME_PREFIX) : -len(".tmp")].partition("-")
    return (
        bool(dash) and pid.isascii() and pid.isdigit() and len(digits) == 16
        and all(ch in "0123456789abcdef" for ch in digits)
    )  # fmt: skip


def remove_stale_temp(dir_fd: int, name: str, min_age_seconds: float) -> bool:
    """Unlink temp file ``name`` of ``dir_fd`` if it is a regular file (never a symlink: the
    name is looked up without following) untouched for ``min_age_seconds``. True if removed."""
    if not is_temp_name(name):
        return False
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode) or time.time() - info.st_mtime < min_age_seconds:
        return False
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def create_only(
    dir_fd: int, name: str, data: bytes, *, exists_message: str, label_path: str
) -> None:
    """Write ``data`` to ``name`` in ``dir_fd`` only if nothing exists there yet.

    Exclusive no-follow temp file → write → fsync → ``link`` (atomic, never overwrites,
    never follows) → fsync the directory. The temp name starts with a dot, so readers skip it.
    """
    temp = f".ecc-memory-{os.getpid()}-{os.urandom(8).hex()}.tmp"
    fd = os.open(temp, _CREATE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        try:
            opened = os.fstat(fd)
            named = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
            if not (
                stat.S_ISREG(opened.st_mode)
                and stat.S_ISREG(named.st_mode)
                and same_file_identity(opened, named)
            ):
                raise UnsafePathError("Memory destination changed while it was being created.")
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            raise AlreadyExistsError(exists_message) from None
        os.fsync(dir_fd)
    finally:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass


def read_fd_text(fd: int, max_bytes: int, label: str, size: int = -1) -> str:
    """Read at most ``max_bytes`` from an open descriptor and decode strict UTF-8.

    A leading UTF-8 BOM is dropped, as the reference's decoder does (stated in docs/memory.md).
    ``size`` is a regular file's size from ``fstat``: a read that comes back short with the file
    read up to exactly that size reached its end, so the read that would say so is skipped (a
    file grown since the ``fstat`` gives a longer read, and reading goes on).
    """
    chunks: list[bytes] = []
    total = 0
    # a file of known size in one read of just past it (a larger buffer is allocated, then cut)
    first = size + 1 if 0 <= size < READ_CHUNK else READ_CHUNK
    while True:
        want = min(first if not chunks else READ_CHUNK, max_bytes + 1 - total)
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise EccError(f"{label} is too large (maximum {max_bytes} bytes).")
        if total == size and len(chunk) < want:
            break
    return decode_utf8(chunks[0] if len(chunks) == 1 else b"".join(chunks), label)


def decode_utf8(raw: bytes, label: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise EccError(f"{label} must contain valid UTF-8 text.") from None
    return text[1:] if text.startswith("\ufeff") else text


def read_regular_text_file(
    path: str | os.PathLike[str],
    max_bytes: int,
    label: str,
    trusted_root: str | None = None,
    *,
    dir_fd: int | None = None,
) -> str:
    """Read a regular, non-symlink UTF-8 file of at most ``max_bytes``.

    Without a trusted root the open is the first operation on the path (nothing to race); a
    FIFO does not block (``O_NONBLOCK``) and is refused after ``fstat``. A path of more than one
    name is looked up again after the open, and must still name the file opened; a single name
    in a held directory (``dir_fd``) is not: its open was the whole lookup, with no directory on
    the way to swap and no symlink followed (a cold index build saved a fifth of each read).
    """
    if trusted_root is not None:
        assert_within(path, trusted_root, f"read {label}")
    try:
        fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise EccError(f"{label} must be a regular, non-symlink file.") from None
        raise EccError(f"{label} could not be opened: {exc.strerror or exc}.") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise EccError(f"{label} must be a regular, non-symlink file.")
        if dir_fd is None or trusted_root is not None or os.sep in os.fspath(path):
            named = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            if (
                stat.S_ISLNK(named.st_mode)
                or not stat.S_ISREG(named.st_mode)
                or not same_file_identity(opened, named)
            ):
                raise EccError(
                    f"{label} must remain a regular, non-symlink file while it is opened."
                )
        if trusted_root is not None:
            assert_within(path, trusted_root, f"read {label}")
        if opened.st_size > max_bytes:
            raise EccError(f"{label} is too large ({opened.st_size} bytes).")
        return read_fd_text(fd, max_bytes, label, opened.st_size)
    finally:
        os.close(fd)


def read_bounded_stdin(
    max_bytes: int,
    *,
    fd: int = 0,
    read: Callable[[int, int], bytes] = os.read,
    sleep: Callable[[float], None] = time.sleep,
    retry_delay_ms: int = 10,
    max_wait_ms: int = 5000,
) -> str:
    """Read standard input up to ``max_bytes`` (strict UTF-8), riding out EAGAIN/EINTR.

    A non-blocking stdin (some harnesses hand one over) reports EAGAIN until data arrives; the
    wait is bounded so a silent pipe cannot hang the command.
    """
    chunks: list[bytes] = []
    total = 0
    waited = 0
    while True:
        try:
            chunk = read(fd, min(READ_CHUNK, max_bytes + 1 - total))
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR):
                raise EccError(
                    f"Standard input could not be read: {exc.strerror or exc}."
                ) from None
            if waited >= max_wait_ms:
                raise EccError(
                    f"Standard input remained unavailable after {max_wait_ms}ms."
                ) from None
            sleep(retry_delay_ms / 1000)
            waited += retry_delay_ms
            continue
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise EccError(f"memory body is too large (maximum {max_bytes} bytes).")
    return decode_utf8(b"".join(chunks), "memory body from standard input")
