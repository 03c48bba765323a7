"""ecc's hook applied to one managed session's OpenCode process: a plugin in the session's
private directory, loaded through ``OPENCODE_CONFIG_CONTENT``.

OpenCode reads ``OPENCODE_CONFIG_CONTENT`` as one more config, merged after the global config,
``OPENCODE_CONFIG``, the project's ``opencode.json`` files and the ``.opencode`` directories, so
the user's own configuration keeps working. Plugin lists are not replaced but accumulated
across configs and deduplicated (a ``file://`` plugin by its whole URL): a repository's config
cannot remove a plugin at a path of the session's private directory, and OpenCode has no key
that disables one. Being loaded last, it runs after any plugin of the repository that rewrites a
tool's arguments, so ecc decides on the arguments the tool will run with. A value of
``OPENCODE_CONFIG_CONTENT`` already in ecc's environment is kept: the plugin is added to it.

The module runs ``SessionEnforcement.argv`` as an asynchronous child process and allows it
``timeout_secs``; unlike the module ``ecc hooks install`` writes it fails closed: a hook that
times out, cannot start or is killed denies the call. OpenCode loads no external plugin at all
under ``--pure`` / ``OPENCODE_PURE``: a session started with it in ecc's environment is not
enforced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc_adapter_opencode.integration import EVENT, plugin_module

CONTENT_ENV = "OPENCODE_CONFIG_CONTENT"
MODULE = "ecc-session-hooks.js"
MARKER = "// ecc session hook: written by ecc for one managed session, removed with it."


def session_env(launch: LaunchContext) -> dict[str, str]:
    """``{"OPENCODE_CONFIG_CONTENT": config}`` loading the session's plugin, or ``{}`` when the
    session has no enforcement."""
    enforcement = launch.enforcement
    if enforcement is None:
        return {}
    argv = [*enforcement.argv, "--event", EVENT]
    text = plugin_module(
        MARKER, argv, enforcement.timeout_secs, fail_closed=True, export="EccSessionHooks"
    )
    module = write_private(Path(enforcement.directory) / MODULE, text)
    config = inherited_config()
    plugins = config.get("plugin", [])
    if not isinstance(plugins, list):
        raise EccError(f'"plugin" in {CONTENT_ENV} is not a list: ecc cannot add its hook')
    entry = module.as_uri()
    config["plugin"] = [*(p for p in plugins if p != entry), entry]
    return {CONTENT_ENV: json.dumps(config)}


def inherited_config() -> dict[str, Any]:
    """The ``OPENCODE_CONFIG_CONTENT`` of ecc's own environment, as a dict (``{}`` when unset)."""
    raw = os.environ.get(CONTENT_ENV, "")
    if not raw.strip():
        return {}
    try:
        config = json.loads(raw)
    except ValueError:
        config = None
    if not isinstance(config, dict):
        raise EccError(
            f"{CONTENT_ENV} in ecc's environment is not a JSON object: ecc cannot add its hook"
        )
    return config


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all, readable by the user only."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
    return path
