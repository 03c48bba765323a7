"""The whole configuration as pydantic models, loaded from layered TOML.

Layers, later wins: built-in defaults < user file (``<config dir>/config.toml``) < project file
(``<repo>/.ecc/config.toml``) < the file named by ``ECC_CONFIG`` < environment variables
(``ECC__SECTION__KEY=value``) < command-line overrides (``ecc -c key=value``). Tables merge key by
key; every other value, lists included, replaces the earlier one whole.

Every leaf value remembers the layer it came from, so ``ecc config show --origin`` and validation
errors can name the file and key at fault.

The project file comes with the repository, so it is trusted only as far as
:mod:`ecc.runtime.config.guarded` allows: until the user approves its content (``ecc trust``,
:mod:`ecc.runtime.config.trust`), its keys that run programs, loosen enforcement or redirect
output are dropped before the merge unless they tighten what the lower layers give, and
:attr:`LoadedConfig.ignored` says which and why. Values are validated with every layer first,
so a bad value is reported wherever it is.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator

from ecc.contract.errors import ConfigError
from ecc.runtime import paths
from ecc.runtime.config import guarded, trust
from ecc.runtime.config import overrides as cli_overrides
from ecc.runtime.config.orchestration import OrchestrationTemplate
from ecc.runtime.config.sections import (
    AgentProfile,
    BudgetThresholds,
    ConflictResolution,
    DelegationSettings,
    HarnessRunner,
    MemorySettings,
    NotificationSettings,
    RemoteSettings,
    RiskSettings,
    StoreSettings,
    SyncSettings,
    WebSettings,
    WorktreeSettings,
    _Strict,
)

ENV_PREFIX = "ECC__"


class Config(_Strict):
    """The effective configuration; names follow the reference's ``ecc2.toml`` where it has one."""

    default_harness: str | None = None
    default_profile: str | None = None
    harness_runners: dict[str, HarnessRunner] = Field(default_factory=dict)
    agent_profiles: dict[str, AgentProfile] = Field(default_factory=dict)
    orchestration_templates: dict[str, OrchestrationTemplate] = Field(default_factory=dict)

    auto_create_worktrees: bool = True
    worktree_root: str | None = None
    worktree_branch_prefix: str = "ecc"
    max_parallel_worktrees: int = Field(default=6, ge=1)
    max_parallel_sessions: int = Field(default=8, ge=1)
    worktree_retention_secs: int = Field(default=7 * 24 * 3600, ge=0)
    prune_worktrees: bool = False

    # Where new sessions run: an executor plugin (``local``, ``celery``, …; ecc run --executor).
    executor: str = "local"
    # Settings tables of executor plugins: ``[executors.celery] broker_url = "redis://…"``.
    executors: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # A session on a remote executor whose heartbeat is older than this is failed by the reaper
    # (daemon, and CLI reads); remote runners beat every second.
    lease_seconds: float = Field(default=5.0, gt=0)

    heartbeat_interval_secs: float = Field(default=5.0, gt=0)
    session_timeout_secs: int = Field(default=3600, gt=0)
    auto_terminate_stale_sessions: bool = False
    stop_grace_secs: float = Field(default=5.0, ge=0)
    # How long a runner retries a failing store write (locked, disk full) before it fails the
    # session, and how far the store may fall behind a harness's output before it is paused.
    store_retry_secs: float = Field(default=60.0, gt=0)
    output_backlog_bytes: int = Field(default=1024 * 1024, ge=64 * 1024)

    cost_budget_usd: float = Field(default=0.0, ge=0)
    token_budget: int = Field(default=0, ge=0)
    budget_alert_thresholds: BudgetThresholds = Field(default_factory=BudgetThresholds)
    # Per-session limits (0 = none; a profile's token_budget / max_budget_usd override them) and
    # what happens at a limit: notify only, or stop the session(s) over it.
    session_token_budget: int = Field(default=0, ge=0)
    session_cost_budget_usd: float = Field(default=0.0, ge=0)
    budget_action: Literal["notify", "stop"] = "notify"

    risk: RiskSettings = Field(default_factory=RiskSettings)
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    remote: RemoteSettings = Field(default_factory=RemoteSettings)
    worktree: WorktreeSettings = Field(default_factory=WorktreeSettings)
    sync: SyncSettings = Field(default_factory=SyncSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    conflict_resolution: ConflictResolution = Field(default_factory=ConflictResolution)
    delegation: DelegationSettings = Field(default_factory=DelegationSettings)

    @field_validator("worktree_branch_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        trimmed = value.strip().strip("/")
        if not trimmed:
            raise ValueError("must not be empty")
        return trimmed


# --------------------------------------------------------------------------------------------
# Layers


@dataclass(frozen=True)
class Layer:
    """One source of configuration values."""

    name: str  # default | user | project | ECC_CONFIG | env | flag
    source: str  # a path, a variable name or "command line"
    data: dict[str, Any]
    trusted: bool = True  # False: a project file whose content the user has not approved


@dataclass(frozen=True)
class IgnoredKey:
    """A key of an untrusted project file that was not applied, and why."""

    key: str
    reason: str
    source: str

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "reason": self.reason, "source": self.source}


@dataclass
class LoadedConfig:
    config: Config
    layers: list[Layer]
    origins: dict[tuple[str, ...], str] = field(default_factory=dict)
    ignored: list[IgnoredKey] = field(default_factory=list)

    def origin_of(self, key: str) -> str:
        path = tuple(key.split("."))
        for length in range(len(path), 0, -1):
            found = self.origins.get(path[:length])
            if found:
                return found
        return "default"


def read_toml_file(path: Path) -> dict[str, Any]:
    return parse_toml(read_config_bytes(path), path)


def read_config_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc


def parse_toml(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from exc


def parse_value(text: str) -> Any:
    """A command-line or environment value: a TOML value if it parses as one, else the string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    if not all(parts):
        raise ConfigError(f"invalid config key {key!r}")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"config key {key!r}: {part!r} is not a table")
        node = child
    node[parts[-1]] = value


def env_layer(environ: Mapping[str, str]) -> Layer | None:
    data: dict[str, Any] = {}
    names = []
    for name, value in sorted(environ.items()):
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX):
            key = ".".join(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
            set_dotted(data, key, parse_value(value))
            names.append(name)
    return Layer("env", ",".join(names), data) if data else None


def flag_layer(overrides: Iterable[str]) -> Layer | None:
    data: dict[str, Any] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"config override {item!r} must look like KEY=VALUE")
        set_dotted(data, key.strip(), parse_value(value))
    return Layer("flag", "command line", data) if data else None


def file_layers(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> list[Layer]:
    environ = os.environ if environ is None else environ
    layers: list[Layer] = []
    seen: set[Path] = set()
    explicit = environ.get("ECC_CONFIG")
    named = Path(explicit).expanduser().resolve() if explicit else None

    def add(name: str, path: Path | None, required: bool = False) -> None:
        if path is None:
            return
        resolved = path.expanduser().resolve()
        if resolved in seen:
            return
        if not resolved.is_file():
            if required:
                raise ConfigError(f"config file {path} (from ECC_CONFIG) does not exist")
            return
        seen.add(resolved)
        raw = read_config_bytes(resolved)
        data = parse_toml(raw, resolved)
        # the project file is the repository's: trusted once its content is approved, or when
        # the user names it through ECC_CONFIG
        trusted = name != "project" or resolved == named or trust.is_trusted(resolved, raw)
        layers.append(Layer(name, str(resolved), data, trusted))

    add("user", paths.user_config_file())
    add("project", paths.project_config_file(cwd))
    if explicit:
        add("ECC_CONFIG", Path(explicit), required=True)
    return layers


def merge_into(
    target: dict[str, Any],
    overlay: Mapping[str, Any],
    origin: str,
    origins: dict[tuple[str, ...], str],
    prefix: tuple[str, ...] = (),
) -> None:
    """Deep-merge ``overlay`` into ``target``: tables merge, everything else replaces.

    An empty table merges too: it creates the table when there is none (a runner or profile
    with its defaults) and never empties the one a lower layer gave.
    """
    for key, value in overlay.items():
        path = (*prefix, key)
        if isinstance(value, dict):
            if not isinstance(target.get(key), dict):
                target[key] = {}
                _forget(origins, path)
                if not value:
                    origins[path] = origin
            merge_into(target[key], value, origin, origins, path)
        else:
            target[key] = _copy(value)
            _forget(origins, path)
            origins[path] = origin


def _forget(origins: dict[tuple[str, ...], str], path: tuple[str, ...]) -> None:
    for known in [k for k in origins if k[: len(path)] == path]:
        del origins[known]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _describe(layer: Layer) -> str:
    return f"{layer.name}:{layer.source}"


def _validate(layers: list[Layer]) -> tuple[Config, dict[tuple[str, ...], str]]:
    merged: dict[str, Any] = {}
    origins: dict[tuple[str, ...], str] = {}
    for layer in layers:
        merge_into(merged, layer.data, _describe(layer), origins)
    try:
        return Config.model_validate(merged), origins
    except ValidationError as exc:
        raise ConfigError(_explain(exc, origins)) from None


def build(layers: list[Layer]) -> LoadedConfig:
    """Merge and validate ``layers``; an untrusted layer's guarded keys are dropped first."""
    config, origins = _validate(layers)  # every value is checked, applied or not
    filtered = list(layers)
    ignored: list[IgnoredKey] = []
    effective: dict[str, Any] | None = None
    for index, layer in enumerate(layers):
        if layer.trusted or not guarded.guarded_leaves(layer.data):
            continue
        if effective is None:
            effective = config.model_dump(mode="json")
        try:
            lower: dict[str, Any] | None = _validate(filtered[:index])[0].model_dump(mode="json")
        except ConfigError:
            lower = None  # the layers below do not stand alone: nothing guarded applies
        described = _describe(layer)

        def from_layer(path: tuple[str, ...], described: str = described) -> bool:
            return origins.get(path) == described

        kept, dropped = guarded.split(
            layer.data, effective=effective, lower=lower, from_layer=from_layer
        )
        if dropped:
            filtered[index] = Layer(layer.name, layer.source, kept, trusted=False)
            ignored += [IgnoredKey(".".join(path), why, layer.source) for path, why in dropped]
    if ignored:
        config, origins = _validate(filtered)
    return LoadedConfig(config, layers, origins, ignored)


def _explain(exc: ValidationError, origins: dict[tuple[str, ...], str]) -> str:
    lines = []
    for error in exc.errors():
        loc = tuple(str(part) for part in error["loc"])
        key = ".".join(loc) or "(top level)"
        origin = "default"
        for length in range(len(loc), 0, -1):
            if loc[:length] in origins:
                origin = origins[loc[:length]]
                break
        if error["type"] == "extra_forbidden":
            what = "unknown key"
        elif "input" in error and error["type"] not in {"value_error"}:
            what = f"{error['msg'].lower()} (got {error['input']!r})"
        else:
            what = error["msg"].removeprefix("Value error, ")
        lines.append(f"invalid config in {origin}: {key}: {what}")
    return "\n".join(lines)


def load(
    *,
    cwd: Path | None = None,
    overrides: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Read every layer and validate the merged result."""
    environ = os.environ if environ is None else environ
    layers = file_layers(cwd, environ)
    for extra in (env_layer(environ), flag_layer(overrides)):
        if extra is not None:
            layers.append(extra)
    return build(layers)


_current: LoadedConfig | None = None


def set_cli_overrides(overrides: Iterable[str]) -> None:
    """Record ``ecc -c KEY=VALUE`` pairs; they form the last layer of every later load."""
    global _current
    cli_overrides.set_pairs(tuple(overrides))
    _current = None


def current() -> LoadedConfig:
    """The configuration of this process, loaded once."""
    global _current
    if _current is None:
        _current = load(overrides=cli_overrides.pairs())
    return _current


def get_config() -> Config:
    return current().config


def reset() -> None:
    """Forget the loaded configuration (tests, and after ``config set``)."""
    global _current
    _current = None


Scope = Literal["user", "project"]


def layer_file(scope: Scope, cwd: Path | None = None) -> Path:
    if scope == "user":
        return paths.user_config_file()
    found = paths.project_config_file(cwd)
    if found is None:
        raise ConfigError("not inside a git repository: there is no project config to write")
    return found


def set_value(key: str, raw_value: str, scope: Scope, cwd: Path | None = None) -> Path:
    """Write one key into the user or project file, keeping every other key of that file.

    The whole result is validated before anything is written; the file is replaced atomically.
    The user file is private (0600 in a 0700 directory, tightened if looser); the project file,
    shared with the team, keeps its mode.
    """
    import tomli_w

    target = layer_file(scope, cwd)
    data = read_toml_file(target) if target.exists() else {}
    set_dotted(data, key, parse_value(raw_value))
    layers = [layer for layer in load(cwd=cwd).layers if layer.source != str(target.resolve())]
    build([*layers, Layer(scope, str(target), data)])  # raises ConfigError if invalid
    if scope == "user":
        paths.make_private(paths.ensure_private_dir(target.parent))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
    paths.replace_file(target, tomli_w.dumps(data).encode("utf-8"), private=scope == "user")
    reset()
    return target


def lookup(config: Config, key: str) -> Any:
    node: Any = config.model_dump(mode="json")
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"unknown config key {key!r}")
        node = node[part]
    return node
