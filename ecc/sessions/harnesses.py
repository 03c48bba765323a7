"""Which harnesses exist, by asking the adapter plugins (the core keeps no table of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from ecc.contract.types import Config, HarnessInfo


def _config() -> Any:
    from ecc.runtime.config import view as fastconfig

    return fastconfig.view()


def _flatten(results: list[object]) -> list[HarnessInfo]:
    found: list[HarnessInfo] = []
    for result in results:
        if result is None:
            continue
        if isinstance(result, list | tuple):
            found.extend(item for item in result if item is not None)
        else:
            found.append(result)  # type: ignore[arg-type]
    return found


def available(config: Config | None = None) -> dict[str, HarnessInfo]:
    """Every declared harness by canonical name; a later plugin does not replace an earlier one."""
    from ecc.runtime.plugins.loader import get_plugins

    config = config if config is not None else _config()
    infos = _flatten(get_plugins(config).hook.ecc_harnesses(config=config))
    table: dict[str, HarnessInfo] = {}
    # pluggy calls the most recently registered first; keep the first registered of a name
    # except that config runners (declared by the ``runners`` plugin) override built-in names.
    for info in reversed(infos):
        if info.name not in table or "config_runner" in info.capabilities:
            table[info.name] = info
    return dict(sorted(table.items()))


def canonical_name(name: str, config: Config | None = None) -> str:
    wanted = name.strip().lower()
    if not wanted:
        raise EccError("harness name must not be empty")
    table = available(config)
    if wanted in table:
        return wanted
    for info in table.values():
        if wanted in info.aliases:
            return info.name
    known = ", ".join(table) or "none installed"
    raise EccError(f"unknown harness {name!r} (known: {known})")


def resolve(name: str, config: Config | None = None) -> HarnessInfo:
    return available(config)[canonical_name(name, config)]


def detect(project_dir: Path, config: Config | None = None) -> list[str]:
    """Harness names whose markers ``project_dir`` has, in a stable order."""
    from ecc.runtime.plugins.loader import get_plugins

    config = config if config is not None else _config()
    results = get_plugins(config).hook.ecc_detect_harness(project_dir=project_dir, config=config)
    names: list[str] = []
    for result in results:
        for name in [result] if isinstance(result, str) else result or []:
            if name not in names:
                names.append(name)
    return sorted(names)
