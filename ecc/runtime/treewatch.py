"""The tree watcher: inotify on directory trees, so a warm search need not stat every file.

``ecc daemon`` runs it on a thread (:func:`start`); ``python -m ecc.runtime.treewatch CACHE_DIR``
runs it alone. It listens on :func:`ecc.runtime.watchclient.socket_path` and answers one request
a connection: for each root path asked about, ``[epoch, generation, st_dev, st_ino]`` or null.

- The first question about a root starts watching it: every directory below it (dot directories
  aside, as the vault walk skips them) gets a watch for every kind of change, then the answer
  carries a fresh random ``epoch``. The asker walks after that, so nothing before the watches
  were in place can be missed.
- Any event under a root adds one to its ``generation``. Before answering, the watcher reads
  every event the kernel has queued: an edit that finished before the question was sent is
  counted in the answer (one inotify queue is first in, first out).
- A new directory gets its watches as its creation is read (the walk that follows sees what was
  put in it before). A directory moved within or out of a root, a root removed or moved, a
  failed watch and a queue overflow drop the root: the next question starts a new epoch.
- Only local filesystems are watched: on NFS, FUSE or virtiofs another machine's edits raise no
  event. Edits through a hard link from outside the tree and writes through a shared mapping
  raise none either: those need the walk (the answer is no stronger than inotify).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import secrets
import selectors
import socket
import stat
import struct
import sys
import threading
from pathlib import Path

from ecc.runtime.watchclient import MAX_REPLY, MAX_ROOTS, PROTOCOL, socket_path

log = logging.getLogger("ecc.treewatch")

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
_EVENT = struct.Struct("iIII")

MAX_WATCHED_ROOTS = 64
MAX_DIRS_PER_ROOT = 20_000
MAX_DEPTH = 10  # the vault walk stops at 8
# Filesystems whose every change passes through this kernel, so inotify sees it.
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "jfs", "reiserfs", "overlay"}
)


class _Root:
    __slots__ = ("dev", "epoch", "generation", "ino", "path", "top", "wds")

    def __init__(self, path: str, dev: int, ino: int) -> None:
        self.path = path
        self.dev = dev
        self.ino = ino
        self.epoch = secrets.token_hex(12)
        self.generation = 0
        self.top = -1
        self.wds: set[int] = set()


class TreeWatcher:
    """The watches and counters; one thread drives it (``serve``), so there are no locks."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = (ctypes.c_int, ctypes.c_int)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd = fd
        self.roots: dict[str, _Root] = {}
        self._owner: dict[int, _Root] = {}  # wd -> root
        self._paths: dict[int, str] = {}  # wd -> directory path

    def close(self) -> None:
        os.close(self.fd)

    # -- answers -------------------------------------------------------------------------------

    def answer(self, path: str) -> list[object] | None:
        root = self.roots.get(path)
        if root is None:
            root = self._start(path)
            if root is None:
                return None
        return [root.epoch, root.generation, root.dev, root.ino]

    def _start(self, path: str) -> _Root | None:
        if len(self.roots) >= MAX_WATCHED_ROOTS or not os.path.isabs(path):
            return None
        try:
            info = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode) or _fstype(info.st_dev) not in LOCAL_FILESYSTEMS:
            return None
        root = _Root(path, info.st_dev, info.st_ino)
        self.roots[path] = root
        try:
            root.top = self._watch_tree(root, path, 0)
            after = os.lstat(path)
        except OSError:
            self._drop(root)
            return None
        if (after.st_dev, after.st_ino) != (root.dev, root.ino):
            self._drop(root)  # replaced while its watches were being added
            return None
        return root

    def _watch_tree(self, root: _Root, path: str, depth: int) -> int:
        """Watch ``path`` and every directory below it; raise OSError when one cannot be."""
        wd = self._add(self.fd, os.fsencode(path), WATCH_MASK)
        if wd < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))
        if self._owner.get(wd, root) is not root:
            raise OSError(0, "roots overlap")  # that watch stays the other root's
        root.wds.add(wd)
        self._owner[wd] = root
        self._paths[wd] = path
        if len(root.wds) > MAX_DIRS_PER_ROOT:
            raise OSError(0, "too many directories")
        if depth < MAX_DEPTH:
            with os.scandir(path) as entries:
                subdirs = [
                    entry.path
                    for entry in entries
                    if entry.name[0] != "." and entry.is_dir(follow_symlinks=False)
                ]
            for child in subdirs:
                try:
                    self._watch_tree(root, child, depth + 1)
                except FileNotFoundError:
                    pass  # removed meanwhile: its deletion is an event of its parent
        return wd

    def _drop(self, root: _Root) -> None:
        self.roots.pop(root.path, None)
        for wd in root.wds:
            self._owner.pop(wd, None)
            self._paths.pop(wd, None)
            self._rm(self.fd, wd)  # its IN_IGNORED then names an unknown wd: skipped
        root.wds.clear()

    # -- events --------------------------------------------------------------------------------

    def drain(self) -> None:
        """Read and apply every event queued so far."""
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                name = data[offset + 16 : offset + 16 + size].rstrip(b"\0")
                offset += 16 + size
                self._apply(wd, mask, name)

    def _apply(self, wd: int, mask: int, name: bytes) -> None:
        if mask & IN_Q_OVERFLOW:
            for lost in list(self.roots.values()):
                self._drop(lost)  # events were lost: nothing is vouched for any more
            return
        root = self._owner.get(wd)
        if root is None:
            return
        root.generation += 1
        if mask & _GONE:
            if wd == root.top:
                self._drop(root)
            elif mask & IN_IGNORED:
                root.wds.discard(wd)
                self._owner.pop(wd, None)
                self._paths.pop(wd, None)
            return
        if not mask & IN_ISDIR or name.startswith(b"."):
            return
        if mask & (IN_MOVED_FROM | IN_MOVED_TO):
            self._drop(root)  # the paths of the watches below it changed
        elif mask & IN_CREATE:
            try:
                self._watch_tree(root, os.path.join(self._paths[wd], os.fsdecode(name)), 0)
            except FileNotFoundError:
                pass  # already gone again: its removal is an event here too
            except OSError:
                self._drop(root)


def _fstype(dev: int) -> str:
    """The filesystem type of the mount with device number ``dev`` (from mountinfo)."""
    wanted = f"{os.major(dev)}:{os.minor(dev)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 2 and fields[2] == wanted and " - " in line:
                    return line.split(" - ", 1)[1].split()[0]
    except OSError:
        pass
    return ""


class Server:
    """The watcher behind its socket; :meth:`serve` runs until :meth:`stop`."""

    def __init__(self, cache_dir: Path) -> None:
        from ecc.runtime.paths import ensure_private_dir

        self.path = socket_path(cache_dir)
        ensure_private_dir(self.path.parent)
        self.watcher = TreeWatcher()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._bind()
        except BaseException:
            self.listener.close()
            self.watcher.close()
            raise
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False

    def _bind(self) -> None:
        path = str(self.path)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(1)
            probe.connect(path)
        except OSError:
            pass  # nobody listens: a leftover of a killed watcher, or nothing
        else:
            raise OSError(f"another watcher already listens on {path}")
        finally:
            probe.close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self._identity = os.lstat(path).st_ino
        self.listener.listen(64)
        self.listener.setblocking(False)

    def serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.watcher.fd, selectors.EVENT_READ, "events")
        selector.register(self.listener, selectors.EVENT_READ, "ask")
        selector.register(self._wake_r, selectors.EVENT_READ, "stop")
        try:
            while not self._stopping:
                for key, _ in selector.select():
                    if key.data == "events":
                        self.watcher.drain()
                    elif key.data == "ask":
                        self._accept()
        finally:
            selector.close()
            self._close()

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return
        with conn:
            try:
                conn.settimeout(0.5)
                peer = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
                if int.from_bytes(peer[4:8], sys.byteorder) != os.getuid():
                    return
                request = _read_line(conn)
                if not isinstance(request, dict):
                    return
                paths = request.get("roots")
                if (
                    request.get("v") != PROTOCOL
                    or not isinstance(paths, list)
                    or len(paths) > MAX_ROOTS
                    or not all(isinstance(path, str) for path in paths)
                ):
                    return
                self.watcher.drain()  # every change made before the question is counted
                answers = [self.watcher.answer(path) for path in paths]
                conn.sendall(json.dumps({"v": PROTOCOL, "roots": answers}).encode() + b"\n")
            except (OSError, ValueError) as exc:
                log.debug("watch request dropped: %s", exc)

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_w, b"x")

    def _close(self) -> None:
        try:
            if os.lstat(self.path).st_ino == self._identity:
                os.unlink(self.path)  # still ours: a later watcher may have replaced it
        except OSError:
            pass
        self.listener.close()
        self.watcher.close()
        os.close(self._wake_r)
        os.close(self._wake_w)


def _read_line(conn: socket.socket) -> object:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(MAX_REPLY)
        if not chunk or len(data) + len(chunk) > MAX_REPLY:
            raise ValueError("no request line")
        data += chunk
    return json.loads(data)


class Running:
    """A server on its thread (what :func:`start` returns)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.thread = threading.Thread(target=server.serve, name="ecc-treewatch", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.stop()
        self.thread.join(timeout=10)


def start(cache_dir: Path) -> Running | None:
    """Serve the watcher on a thread, or None where it cannot run (no inotify, one runs)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return Running(Server(cache_dir))
    except OSError as exc:
        log.info("memory tree watcher not started: %s", exc)
        return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ecc.runtime.treewatch CACHE_DIR", file=sys.stderr)
        return 2
    import signal

    server = Server(Path(argv[0]))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: server.stop())
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
