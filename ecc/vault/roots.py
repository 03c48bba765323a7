"""Where each memory scope lives, and the trusted boundary every path of that scope must stay in.

``project`` and ``team`` live in ``<project>/.ecc/memory/{project,team}``, ``user`` in
``~/.ecc/memory``; ``ECC_MEMORY_PROJECT_ROOT`` and ``ECC_MEMORY_USER_ROOT`` move them. The project
is the nearest ancestor of the working directory holding ``.git`` (else the working directory).
Roots carry a boundary per scope that only :func:`resolve_vault_roots` can set, so a hand-made
mapping of paths cannot be used to write anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ecc.contract.errors import EccError
from ecc.vault.format import MEMORY_SCOPES, as_non_empty_string
from ecc.vault.safefs import canonical_nearest_existing

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

_SEAL = object()
MAX_ROOT_OVERRIDE_CHARS = 4096


class VaultRoots:
    """The directory of each scope and its trusted boundary (set only by the resolver).

    Immutable once built (a plain class: a frozen dataclass costs more to define than a search
    spends resolving roots).
    """

    __slots__ = ("_boundaries", "_seal", "project", "project_root", "team", "user")
    project: Path
    team: Path
    user: Path
    project_root: Path
    _boundaries: dict[str, str]
    _seal: Any

    def __init__(
        self,
        project: Path,
        team: Path,
        user: Path,
        project_root: Path,
        _boundaries: Mapping[str, str] | None = None,
        _seal: Any = None,
    ) -> None:
        for name, value in (
            ("project", project), ("team", team), ("user", user), ("project_root", project_root),
            ("_boundaries", dict(_boundaries or {})), ("_seal", _seal),
        ):  # fmt: skip
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"VaultRoots is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"VaultRoots is immutable (cannot delete {name!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VaultRoots):
            return NotImplemented
        return (self.project, self.team, self.user, self.project_root) == (
            other.project, other.team, other.user, other.project_root,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.project, self.team, self.user, self.project_root))

    def __repr__(self) -> str:
        return (
            f"VaultRoots(project={self.project!r}, team={self.team!r}, user={self.user!r},"
            f" project_root={self.project_root!r})"
        )

    def root(self, scope: str) -> Path:
        return {"project": self.project, "team": self.team, "user": self.user}[scope]

    def boundary(self, scope: str) -> str:
        return self._boundaries[scope]


def find_project_root(cwd: Path) -> Path:
    """Nearest ancestor holding a ``.git`` entry (file or directory); else ``cwd`` itself."""
    here = Path(os.path.abspath(cwd))
    for candidate in (here, *here.parents):
        if os.path.exists(candidate / ".git"):
            return candidate
    return here


def _override(env: Mapping[str, str], name: str, cwd: Path) -> Path | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    # the reference's string rule: trimmed, at most 4096 UTF-16 units, no control/bidi character
    trimmed = as_non_empty_string(raw, "memory root override", MAX_ROOT_OVERRIDE_CHARS)
    return Path(os.path.abspath(os.path.join(cwd, trimmed)))


def check_root_overrides(env: Mapping[str, str] | None = None) -> None:
    """Fail early on a whitespace-only root override (every non-help command does this)."""
    env = os.environ if env is None else env
    for name in ("ECC_MEMORY_PROJECT_ROOT", "ECC_MEMORY_USER_ROOT"):
        _override(env, name, Path.cwd())


def resolve_vault_roots(
    cwd: Path | None = None,
    home_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> VaultRoots:
    """Resolve the three scope roots and their boundaries for one invocation."""
    env = os.environ if env is None else env
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    if home_dir is None:
        raw_home = env.get("HOME") or env.get("USERPROFILE") or str(Path.home())
        home_dir = Path(raw_home)
    home = Path(os.path.abspath(home_dir))
    project_root = find_project_root(cwd)
    project_override = _override(env, "ECC_MEMORY_PROJECT_ROOT", cwd)
    user_override = _override(env, "ECC_MEMORY_USER_ROOT", cwd)
    project_vault = project_override or project_root / ".ecc" / "memory"
    user_vault = user_override or home / ".ecc" / "memory"
    try:
        project_boundary = (
            canonical_nearest_existing(project_vault) if project_override else str(project_root)
        )
        user_boundary = canonical_nearest_existing(user_vault) if user_override else str(home)
    except OSError as exc:
        raise EccError(f"Memory root cannot be resolved: {exc.strerror or exc}.") from None
    return VaultRoots(
        project=project_vault / "project",
        team=project_vault / "team",
        user=user_vault,
        project_root=project_root,
        _boundaries={"project": project_boundary, "team": project_boundary, "user": user_boundary},
        _seal=_SEAL,
    )


def require_roots(roots: Any, scope: str) -> tuple[Path, str]:
    """The root and boundary of ``scope``, refusing roots that did not come from the resolver."""
    if not isinstance(roots, VaultRoots) or roots._seal is not _SEAL:
        raise EccError("Memory roots must include a trusted boundary policy.")
    if scope not in MEMORY_SCOPES:
        raise EccError(f'No memory root is configured for scope "{scope}".')
    boundary = roots._boundaries.get(scope)
    if not boundary:
        raise EccError(f'No trusted boundary policy is configured for memory scope "{scope}".')
    return roots.root(scope), boundary
