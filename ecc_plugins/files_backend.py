"""The built-in ``files`` memory backend: ``ecc.memory.v1`` Markdown files on disk.

Layout: ``<scope root>/<kind>s/<id>.md``; project scope root holds a fail-closed ``.gitignore``.
Every operation starts from the scope root opened with ``O_NOFOLLOW`` and continues through
directory descriptors, so a symlink swapped in during an operation is never followed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from stat import S_ISDIR, S_ISLNK

from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.vault import safefs
from ecc.vault.backend import ScanResult
from ecc.vault.format import MEMORY_KINDS
from ecc.vault.roots import VaultRoots, require_roots, resolve_vault_roots

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

GITIGNORE = b"*\n!.gitignore\n"
GITIGNORE_MAX = 131072
MAX_DEPTH = 8
# A stamp is only trusted for a file whose last change (ctime) is older than the scan by more
# than the coarsest timestamp granularity we expect (a clock tick on Linux, 2 s on FAT): an edit
# made in the same tick as the scan's stat, keeping the size, would otherwise leave every part of
# the stamp unchanged and be missed for good. Such a file gets no stamp and is read again.
RACY_WINDOW_NS = 2_000_000_000


class FilesStore:
    """The files backend bound to the roots of one invocation."""

    def __init__(self, roots: VaultRoots) -> None:
        self.roots = roots
        self._dir_fds: dict[tuple[str, str], int] = {}
        self._racy_after = 0

    # -- roots ---------------------------------------------------------------------------------

    def _checked_root(self, scope: str) -> Path:
        root, boundary = require_roots(self.roots, scope)
        safefs.assert_within(root, boundary, "access memory through a symlink")
        if os.path.islink(root):
            raise safefs.UnsafePathError(f"Refusing to access memory through symlink root: {root}")
        return root

    def _open_root(self, root: Path) -> int:
        fd = safefs.open_dir(root)
        try:
            if not safefs.same_file_identity(os.fstat(fd), os.stat(os.path.realpath(root))):
                raise safefs.UnsafePathError(
                    f"Refusing to access memory through symlink root: {root}"
                )
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _ensure_root(self, scope: str) -> tuple[Path, int]:
        root = self._checked_root(scope)
        safefs.make_private_dirs(root)
        fd = self._open_root(root)
        if scope == "project":
            try:
                self._ensure_gitignore(fd, root)
            except BaseException:
                os.close(fd)
                raise
        return root, fd

    def _ensure_gitignore(self, root_fd: int, root: Path) -> None:
        message = "Project memory .gitignore does not contain the required fail-closed rules."
        try:
            safefs.create_only(
                root_fd,
                ".gitignore",
                GITIGNORE,
                exists_message=message,
                label_path=str(root / ".gitignore"),
            )
            return
        except safefs.AlreadyExistsError:
            pass
        content = safefs.read_regular_text_file(
            ".gitignore", GITIGNORE_MAX, "project memory .gitignore", dir_fd=root_fd
        )
        if content.encode("utf-8") != GITIGNORE:
            raise EccError(message)

    def _kind_dir(self, root_fd: int, root: Path, kind_dir: str) -> int:
        path = root / kind_dir
        safefs.assert_within(path, str(root), "access memory directory")
        return safefs.ensure_subdir(root_fd, kind_dir, label_path=str(path))

    # -- VaultStore ----------------------------------------------------------------------------

    def location(self, scope: str) -> str:
        root, _ = require_roots(self.roots, scope)
        return str(root)

    def init(self, scope: str) -> list[str]:
        root, fd = self._ensure_root(scope)
        created = []
        try:
            for kind in MEMORY_KINDS:
                os.close(self._kind_dir(fd, root, f"{kind}s"))
                created.append(str(root / f"{kind}s"))
        finally:
            os.close(fd)
        return created

    def create(self, scope: str, kind_dir: str, name: str, text: str, exists_message: str) -> str:
        root, fd = self._ensure_root(scope)
        try:
            kind_fd = self._kind_dir(fd, root, kind_dir)
            try:
                destination = root / kind_dir / name
                safefs.assert_within(destination, str(root), "write memory")
                safefs.create_only(
                    kind_fd,
                    name,
                    text.encode("utf-8"),
                    exists_message=exists_message,
                    label_path=str(destination),
                )
            finally:
                os.close(kind_fd)
        finally:
            os.close(fd)
        return f"{kind_dir}/{name}"

    def watch_root(self, scope: str) -> tuple[str, int, int] | None:
        """The scope's root directory as ``(path, st_dev, st_ino)`` for a tree watcher, or None
        when it is missing or not a plain directory (the scan then reports it)."""
        try:
            root = self._checked_root(scope)
            info = os.lstat(root)
        except (OSError, EccError):
            return None
        if not S_ISDIR(info.st_mode):
            return None
        return str(root), info.st_dev, info.st_ino

    def scan(self, scope: str, remaining_entries: int) -> ScanResult:
        root = self._checked_root(scope)
        result = ScanResult()
        try:
            fd = self._open_root(root)
        except FileNotFoundError:
            return result
        self._dir_fds[(scope, "")] = fd
        self._racy_after = time.time_ns() - RACY_WINDOW_NS
        self._walk(scope, fd, "", 0, remaining_entries, result)
        return result

    def _walk(
        self, scope: str, fd: int, prefix: str, depth: int, budget: int, result: ScanResult
    ) -> None:
        if depth > MAX_DEPTH or result.visited >= budget:
            result.truncated = True
            return
        # listdir + one lstat a name: the stat is needed anyway (a document's stamp), and it
        # also gives the type, so the common case costs one system call a file.
        names = sorted(os.listdir(fd))
        append = result.documents.append
        stat = os.stat
        racy_after = self._racy_after
        visited = result.visited
        for name in names:
            if visited >= budget:
                result.truncated = True
                break
            visited += 1
            try:
                info = stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed since the listing
            mode = info.st_mode
            if mode & 0o170000 == 0o100000:  # S_ISREG, inline: this loop runs once per file
                if name[0] == "." or not name.endswith(".md"):
                    if name[0] == "." and safefs.is_temp_name(name):
                        result.temp_files.append(prefix + name)  # a killed writer's leftover
                    continue
                rel = prefix + name
                if not rel.isascii() and _printable(rel) != rel:
                    append((_printable(rel), ""))  # not UTF-8: unreadable
                    continue
                if info.st_ctime_ns >= racy_after:
                    append((rel, ""))  # changed too recently for its stamp to be trusted
                    continue
                stamp = (  # an f-string: twice as fast as str.format, and this runs per file
                    f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
                )
                append((rel, stamp))  # the DocumentRef pair, without a Python-level constructor
            elif S_ISDIR(mode):
                if name[0] == ".":
                    continue
                rel = prefix + name
                try:
                    child = safefs.open_dir(name, dir_fd=fd)
                except OSError:
                    continue  # unreadable directory: nothing below it can be listed
                self._dir_fds[(scope, rel)] = child
                result.visited = visited
                self._walk(scope, child, f"{rel}/", depth + 1, budget, result)
                visited = result.visited
            elif S_ISLNK(mode):
                result.symlinks.append(_printable(prefix + name))
        result.visited = visited

    def read(self, scope: str, rel: str, max_bytes: int) -> str:
        directory, _, name = rel.rpartition("/")
        fd = self._dir_fds.get((scope, directory))
        if fd is None:
            raise EccError("memory document was not scanned")
        return safefs.read_regular_text_file(name, max_bytes, "memory document", dir_fd=fd)

    def remove_stale_temp(self, scope: str, rel: str, min_age_seconds: float) -> bool:
        directory, _, name = rel.rpartition("/")
        fd = self._dir_fds.get((scope, directory))
        if fd is None:
            return False
        return safefs.remove_stale_temp(fd, name, min_age_seconds)

    def close(self) -> None:
        for fd in self._dir_fds.values():
            os.close(fd)
        self._dir_fds.clear()


def _printable(rel: str) -> str:
    """Names that are not valid UTF-8 are shown with replacement characters."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class FilesBackend:
    """Factory returned by the hook; ``open`` resolves roots afresh for every invocation."""

    name = "files"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = dict(settings)

    def open(self, cwd: Path, env: Mapping[str, str]) -> FilesStore:
        return FilesStore(resolve_vault_roots(cwd, None, env))


@hookimpl
def ecc_memory_backend(name: str, settings: dict[str, Any]) -> FilesBackend | None:
    if name != "files":
        return None
    return FilesBackend(settings)
