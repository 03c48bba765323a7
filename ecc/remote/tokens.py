"""Bearer tokens for the remote API: created into a 0600 file, read from a file or the
environment (never from argv), compared in constant time.

A token file holds one token per line (blank lines and ``#`` comments are ignored), so a server
can accept several clients' tokens and rate-limit each one separately. A file that others can
read is refused, as ssh refuses a private key with loose permissions.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from ecc.contract.errors import EccError

TOKEN_ENV = "ECC_REMOTE_TOKEN"
TOKEN_FILE_ENV = "ECC_REMOTE_TOKEN_FILE"
TOKEN_BYTES = 32  # 256 bits, URL-safe base64: 43 characters
MIN_TOKEN_CHARS = 16
MAX_TOKEN_CHARS = 512


def default_token_file() -> Path:
    from ecc.runtime import paths

    return paths.config_dir() / "remote-token"


def generate() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def create_token_file(path: Path | None = None, *, force: bool = False) -> Path:
    """Write a new random token to ``path`` (default: the config dir) with mode 0600."""
    from ecc.runtime import paths

    target = (path or default_token_file()).expanduser()
    if target.exists() and not force:
        raise EccError(f"token file {target} already exists (--force replaces it)")
    paths.ensure_private_dir(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600)
    try:
        os.write(fd, (generate() + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return target


def _check_token(token: str, where: str) -> str:
    if not (MIN_TOKEN_CHARS <= len(token) <= MAX_TOKEN_CHARS):
        raise EccError(
            f"the token in {where} must be {MIN_TOKEN_CHARS}-{MAX_TOKEN_CHARS} characters long"
        )
    if not all(33 <= ord(ch) <= 126 for ch in token):
        raise EccError(f"the token in {where} must be printable ASCII without spaces")
    return token


def read_token_file(path: Path, *, many: bool = False) -> list[str]:
    """The token(s) in ``path``; refuses a file readable by group or others."""
    path = path.expanduser()
    try:
        info = path.stat()
    except OSError as exc:
        raise EccError(f"cannot read token file {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise EccError(f"token file {path} is not a regular file")
    if info.st_mode & 0o077:
        raise EccError(
            f"token file {path} is accessible by other users (mode {info.st_mode & 0o777:04o}); "
            f"run: chmod 600 {path}"
        )
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise EccError(f"cannot read token file {path}: {exc}") from None
    found = [
        _check_token(line.strip(), str(path))
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    if not found:
        raise EccError(f"token file {path} holds no token")
    if len(found) > 1 and not many:
        raise EccError(f"token file {path} holds more than one token; a client uses one")
    return found


def server_tokens(token_file: Path | None) -> tuple[list[str], str]:
    """The tokens a server accepts and where they came from.

    Order: ``--token-file``, then ``$ECC_REMOTE_TOKEN`` (removed from the environment at once, so
    sessions started by the server never inherit it), then ``$ECC_REMOTE_TOKEN_FILE``, then the
    default file made by ``ecc remote token``.
    """
    from_env = os.environ.pop(TOKEN_ENV, None)  # always: sessions must never inherit it
    if token_file is not None:
        return read_token_file(token_file, many=True), str(token_file)
    if from_env is not None:
        return [_check_token(from_env.strip(), f"${TOKEN_ENV}")], f"${TOKEN_ENV}"
    env_file = os.environ.get(TOKEN_FILE_ENV)
    if env_file:
        return read_token_file(Path(env_file), many=True), env_file
    default = default_token_file()
    if default.exists():
        return read_token_file(default, many=True), str(default)
    raise EccError(
        "no token: run `ecc remote token` first, or pass --token-file FILE, "
        f"or set ${TOKEN_ENV} / ${TOKEN_FILE_ENV}"
    )


class TokenSet:
    """The accepted tokens; :meth:`match` compares in constant time and names no token."""

    def __init__(self, tokens: list[str]) -> None:
        if not tokens:
            raise EccError("at least one token is required")
        self._tokens = [t.encode("ascii") for t in tokens]
        # a stable, non-secret label per token: the rate limiter's key
        self._labels = [hashlib.sha256(t).hexdigest()[:16] for t in self._tokens]

    def match(self, presented: bytes) -> str | None:
        """The label of the token ``presented`` equals, or None; every token is compared."""
        found: str | None = None
        for token, label in zip(self._tokens, self._labels, strict=True):
            if hmac.compare_digest(presented, token):
                found = label
        return found


def parse_authorization(value: bytes | None) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None if malformed."""
    if not value:
        return None
    scheme, _, rest = value.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    token = rest.strip()
    if not token or len(token) > MAX_TOKEN_CHARS or b" " in token:
        return None
    return token
