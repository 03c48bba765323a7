"""The storage contract between the vault service and a memory backend plugin.

The service owns the format, secrets, search, index and diagnostics; a backend only stores and
lists document texts per scope. The built-in ``files`` backend (``ecc_plugins.files_backend``)
is the on-disk vault. Backends are obtained through the ``ecc_memory_backend`` hook only.
"""

from __future__ import annotations

from ecc.contract.errors import EccError

TYPE_CHECKING = False  # typing costs a memory search ~3 ms: the protocols are for checkers
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Protocol

# Plain classes, not dataclasses: these are built on every memory search, and creating a
# dataclass costs more at import than the rest of this module.


class DocumentRef(tuple):
    """One candidate document found by a scan: ``(rel, stamp)``.

    ``rel`` is the path below the scope root ('/'-separated); ``stamp`` is the file's identity
    and changes whenever its content may have changed. A pair, so a backend may append plain
    ``(rel, stamp)`` tuples (the files backend does: one object per file on every search).
    """

    __slots__ = ()

    def __new__(cls, rel: str, stamp: str) -> DocumentRef:
        return tuple.__new__(cls, (rel, stamp))

    @property
    def rel(self) -> str:
        return self[0]

    @property
    def stamp(self) -> str:
        return self[1]

    def __repr__(self) -> str:
        return f"DocumentRef(rel={self[0]!r}, stamp={self[1]!r})"


class ScanResult:
    """Everything a backend found in one scope, in deterministic (sorted) walk order.

    ``documents`` holds ``(rel, stamp)`` pairs (:class:`DocumentRef` or plain tuples);
    ``temp_files`` the rels of writers' temp files left behind (a backend without any leaves it
    empty).
    """

    __slots__ = ("documents", "symlinks", "temp_files", "truncated", "visited")

    def __init__(
        self,
        documents: list[tuple[str, str]] | None = None,
        symlinks: list[str] | None = None,
        visited: int = 0,
        truncated: bool = False,
        temp_files: list[str] | None = None,
    ) -> None:
        self.documents = documents if documents is not None else []
        self.symlinks = symlinks if symlinks is not None else []
        self.visited = visited
        self.truncated = truncated
        self.temp_files = temp_files if temp_files is not None else []


# The contract a backend implements (read by type checkers; nothing checks it at run time).
if TYPE_CHECKING:

    class VaultStore(Protocol):
        """A backend bound to the roots of one invocation (cwd, env)."""

        def location(self, scope: str) -> str:
            """A stable display/index key of the scope's storage (the absolute root for files)."""

        def init(self, scope: str) -> list[str]:
            """Create the scope's storage and kind containers; return the containers (absolute)."""

        def create(
            self, scope: str, kind_dir: str, name: str, text: str, exists_message: str
        ) -> str:
            """Store ``text`` as ``<kind_dir>/<name>`` create-only; return the relative path."""

        def scan(self, scope: str, remaining_entries: int) -> ScanResult:
            """List the scope's candidate documents (missing storage = empty)."""

        def read(self, scope: str, rel: str, max_bytes: int) -> str:
            """Return the decoded text of one scanned document; raise on any problem."""

        def close(self) -> None:
            """Release anything held open."""

        # Optional: a backend whose writers can leave temp files (``ScanResult.temp_files``).
        def remove_stale_temp(self, scope: str, rel: str, min_age_seconds: float) -> bool:
            """Remove one scanned temp file if it is still a regular file that old."""

    class MemoryBackend(Protocol):
        """What ``ecc_memory_backend(name, settings)`` returns."""

        name: str

        def open(self, cwd: Path, env: Mapping[str, str]) -> VaultStore:
            """Bind to the vault roots for this working directory and environment."""


def load_backend(
    name: str, settings: Mapping[str, Any] | None = None, *, cheap: bool = True
) -> MemoryBackend:
    """The memory backend called ``name``, obtained through the ``ecc_memory_backend`` hook.

    Loading every plugin group costs far more than a memory search (stevedore, pydantic), so by
    default only the entry point named ``name`` in ``ecc.memory_backends`` is loaded
    (:func:`ecc.runtime.plugins.sole.call_sole`), which refuses a broken plugin with the usual
    warning. If a process already has
    its plugins loaded (tests, long-lived servers), that set is used instead.
    """
    from ecc.runtime.plugins import loader as plugins

    settings = dict(settings or {})
    if plugins._plugins is not None or not cheap:
        result = plugins.get_plugin_manager().hook.ecc_memory_backend(name=name, settings=settings)
    else:
        result = _cheap_hook(name, settings)
    if result is None:
        raise EccError(
            f"No memory backend named {name!r} is installed (entry point group "
            "ecc.memory_backends); check memory.backend in config and ECC_PLUGINS."
        )
    return result


def _cheap_hook(name: str, settings: dict[str, Any]) -> Any:
    """The hook's answer from entry point ``ecc.memory_backends:name`` alone: on a warm start,
    the recorded implementation called directly (no pluggy, stevedore or
    ``importlib.metadata``), else a plugin set of that entry point (see ``call_sole``)."""
    from ecc.runtime.plugins.sole import call_sole

    return call_sole(
        "ecc.memory_backends", name, "ecc_memory_backend", name=name, settings=settings
    )
