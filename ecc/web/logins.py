"""Who is signed in to the web pages: one-time sign-in nonces, session cookies and CSRF tokens.

Everything is held in memory by the serving process: a restart signs everyone out. A cookie is
``<login id>.<HMAC-SHA256 of it>`` under a key made at start-up, so a forged or altered cookie
is refused before any lookup; the login it names carries its own expiry (checked here, never
trusted from the browser) and its CSRF token, which every state-changing form sends back.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

COOKIE = "ecc_web"
LOGIN_SECS = 12 * 3600
NONCE_SECS = 10 * 60
MAX_LOGINS = 1000  # the oldest go first beyond this
MAX_NONCES = 100


@dataclass
class Login:
    """A signed-in browser: who (the token's non-secret label), until when, its CSRF token."""

    id: str
    label: str
    expires: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    flash: list[str] = field(default_factory=list)  # one-line notices for the next page

    def csrf_ok(self, presented: str | None) -> bool:
        if not presented:
            return False
        return hmac.compare_digest(presented.encode("utf-8", "replace"), self.csrf.encode("ascii"))


class Logins:
    """The signed-in browsers and the pending sign-in nonces of one server process."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._key = secrets.token_bytes(32)
        self._logins: dict[str, Login] = {}
        self._nonces: dict[str, float] = {}
        self._lock = threading.Lock()

    def _sign(self, login_id: str) -> str:
        return hmac.new(self._key, login_id.encode("ascii"), hashlib.sha256).hexdigest()

    def sign_in(self, label: str) -> tuple[Login, str]:
        """A new login for the token labelled ``label`` and the cookie value that names it."""
        login = Login(secrets.token_urlsafe(24), label, self.clock() + LOGIN_SECS)
        with self._lock:
            self._logins[login.id] = login
            while len(self._logins) > MAX_LOGINS:
                del self._logins[next(iter(self._logins))]
        return login, f"{login.id}.{self._sign(login.id)}"

    def find(self, cookie: str | None) -> Login | None:
        """The live login a cookie value names, or None (unsigned, altered, expired, gone)."""
        if not cookie or len(cookie) > 200 or not cookie.isascii():
            return None
        login_id, _, signature = cookie.partition(".")
        if not hmac.compare_digest(signature.encode(), self._sign(login_id).encode()):
            return None
        with self._lock:
            login = self._logins.get(login_id)
            if login is not None and login.expires <= self.clock():
                del self._logins[login_id]
                return None
        return login

    def sign_out(self, login: Login) -> None:
        with self._lock:
            self._logins.pop(login.id, None)

    def new_nonce(self) -> str:
        """A single-use secret for the sign-in link ``ecc web`` prints (not the token)."""
        nonce = secrets.token_urlsafe(32)
        with self._lock:
            self._nonces[nonce] = self.clock() + NONCE_SECS
            while len(self._nonces) > MAX_NONCES:
                del self._nonces[next(iter(self._nonces))]
        return nonce

    def redeem(self, nonce: str | None) -> bool:
        """True once for a live nonce; it is gone afterwards, whatever the answer."""
        if not nonce:
            return False
        with self._lock:
            found = None
            for known in list(self._nonces):  # compare each, in constant time
                if hmac.compare_digest(known.encode(), nonce.encode("utf-8", "replace")):
                    found = known
            expires = self._nonces.pop(found, 0.0) if found else 0.0
        return expires > self.clock()
