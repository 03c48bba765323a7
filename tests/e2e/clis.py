"""Where the real harness CLIs are and how to point each one at the stub model server.

``prepare(name, home, stub_url)`` writes the throwaway configuration a CLI needs under ``home``
and returns the environment to run it with: nothing in it names any address but 127.0.0.1, and
every update check, telemetry and download is turned off (``spec/real-harnesses.md``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = Path(__file__).resolve().parent / "install_clis.sh"
HARNESSES = ("claude", "codex", "gemini", "opencode")
STUB_MODEL = {
    "claude": "claude-sonnet-4-5",
    "codex": "stub-model",
    "gemini": "gemini-2.5-flash",
    "opencode": "stub/stub-model",
}


TIMEOUT = 240  # seconds for one ecc command driving a real CLI


def strings(value: Any) -> Iterator[str]:
    """Every string nested in a JSON value (to search a model request for a text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def ecc(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this checkout's ``ecc ARGS`` in ``cwd`` with exactly ``env``."""
    return subprocess.run(
        [sys.executable, "-m", "ecc", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def cache_dir() -> Path:
    return Path(os.environ.get("ECC_E2E_CACHE") or Path.home() / ".cache" / "ecc-e2e")


def bin_dir() -> Path | None:
    """The directory holding the four installed CLIs, or None when they are not installed."""
    for candidate in (os.environ.get("ECC_E2E_BIN"), cache_dir() / "node_modules" / ".bin"):
        if candidate and all((Path(candidate) / name).exists() for name in HARNESSES):
            return Path(candidate)
    return None


def install() -> Path:
    """Install the pinned CLIs (reused when present) and return their bin directory."""
    out = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip().splitlines()[-1])


def base_env(home: Path, bins: Path) -> dict[str, str]:
    """A minimal environment (as ``env -i`` would give) with a fresh HOME and XDG dirs."""
    node = shutil.which("node")
    path = [str(bins)]
    if node:
        path.append(str(Path(node).parent))
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join(path),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "npm_config_offline": "true",
        # Loopback only, whatever proxy the machine has.
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    for key in ("TMPDIR",):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def prepare(name: str, home: Path, stub_url: str, bins: Path) -> dict[str, str]:
    """Write ``name``'s throwaway config under ``home``; return the env to run it with."""
    home.mkdir(parents=True, exist_ok=True)
    env = base_env(home, bins)
    if name == "claude":
        env.update(
            ANTHROPIC_BASE_URL=stub_url,
            ANTHROPIC_API_KEY="sk-ant-dummy",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            IS_SANDBOX="1",  # the tests run as root; bypassPermissions needs it there
        )
    elif name == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            "\n".join(
                [
                    'model = "stub-model"',
                    'model_provider = "stub"',
                    "check_for_update_on_startup = false",
                    "[model_providers.stub]",
                    'name = "stub"',
                    f'base_url = "{stub_url}/v1"',
                    'env_key = "STUB_API_KEY"',
                    'wire_api = "responses"',
                    "request_max_retries = 0",
                    "stream_max_retries = 0",
                    "[analytics]",
                    "enabled = false",
                    "[otel]",
                    'exporter = "none"',
                    "",
                ]
            )
        )
        env.update(CODEX_HOME=str(codex_home), STUB_API_KEY="dummy")
    elif name == "gemini":
        settings_dir = home / ".gemini"
        settings_dir.mkdir(exist_ok=True)
        settings = {
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        }
        (settings_dir / "settings.json").write_text(json.dumps(settings))
        env.update(GOOGLE_GEMINI_BASE_URL=stub_url, GEMINI_API_KEY="dummy")
    elif name == "opencode":
        config = {
            "autoupdate": False,
            "share": "disabled",
            "model": "stub/stub-model",
            "small_model": "stub/stub-model",
            "provider": {
                "stub": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Stub",
                    "options": {"baseURL": f"{stub_url}/v1", "apiKey": "dummy"},
                    "models": {
                        "stub-model": {
                            "name": "Stub model",
                            "tool_call": True,
                            "limit": {"context": 100000, "output": 4096},
                        }
                    },
                }
            },
        }
        config_file = home / "opencode.json"
        config_file.write_text(json.dumps(config))
        env.update(
            OPENCODE_CONFIG=str(config_file),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_SHARE="1",
            OPENCODE_DISABLE_CLAUDE_CODE="1",
        )
    else:
        raise ValueError(f"unknown harness {name!r}")
    return env
