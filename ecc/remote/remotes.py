"""The client's named servers: ``<config dir>/remotes.json``.

Each entry holds a base URL, the *path* of a token file (never the token), and optionally a CA
bundle for a server with a self-signed certificate. The file is replaced atomically, mode 0600.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ecc.contract.errors import EccError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Remote:
    name: str
    url: str
    token_file: str
    ca_file: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def remotes_file() -> Path:
    from ecc.runtime import paths

    return paths.config_dir() / "remotes.json"


def _load_raw() -> dict[str, Any]:
    path = remotes_file()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EccError(f"cannot read {path}: {exc}") from None
    remotes = data.get("remotes") if isinstance(data, dict) else None
    if not isinstance(remotes, dict):
        raise EccError(f"{path} is not a remotes file (expected an object with 'remotes')")
    return remotes


def load() -> dict[str, Remote]:
    out: dict[str, Remote] = {}
    for name, entry in sorted(_load_raw().items()):
        try:
            out[name] = Remote(
                name=name,
                url=str(entry["url"]),
                token_file=str(entry["token_file"]),
                ca_file=entry.get("ca_file"),
            )
        except (KeyError, TypeError):
            raise EccError(f"remote {name!r} in {remotes_file()} is incomplete") from None
    return out


def get(name: str) -> Remote:
    found = load().get(name)
    if found is None:
        known = ", ".join(load()) or "none; add one with `ecc remote add`"
        raise EccError(f"unknown remote {name!r} (known: {known})")
    return found


def normalize_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EccError(f"remote URL {url!r} must be http://HOST[:PORT] or https://HOST[:PORT]")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise EccError(f"remote URL {url!r} must not carry credentials, a query or a fragment")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


def _save(remotes: dict[str, Any]) -> Path:
    from ecc.runtime import paths

    path = remotes_file()
    paths.ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"remotes": remotes}, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)
    return path


def add(name: str, url: str, token_file: Path, ca_file: Path | None = None) -> Remote:
    from ecc.remote.tokens import read_token_file

    if not NAME_RE.match(name):
        raise EccError(f"remote name {name!r} must be letters, digits, '.', '_' or '-'")
    token_path = token_file.expanduser().resolve()
    read_token_file(token_path)  # refuse a missing, empty or world-readable file now
    ca = None
    if ca_file is not None:
        ca_path = ca_file.expanduser().resolve()
        if not ca_path.is_file():
            raise EccError(f"CA file {ca_file} does not exist")
        ca = str(ca_path)
    remote = Remote(name=name, url=normalize_url(url), token_file=str(token_path), ca_file=ca)
    raw = _load_raw()
    raw[name] = {k: v for k, v in remote.as_dict().items() if k != "name" and v is not None}
    _save(raw)
    return remote


def remove(name: str) -> None:
    raw = _load_raw()
    if name not in raw:
        raise EccError(f"unknown remote {name!r}")
    del raw[name]
    _save(raw)
