"""The web pages: watch, answer and steer every session from a browser (``ecc web``, and the
same pages under ``ecc remote serve`` at ``/web/``).

Modules: :mod:`~ecc.web.logins` (sign-in nonces, signed session cookies with server-side
expiry, CSRF tokens), :mod:`~ecc.web.guard` (the remote API's guard, with a session cookie
instead of the bearer token under ``/web/``, and the security headers),
:mod:`~ecc.web.render` (Jinja2 with autoescape, the filters that show untrusted text),
:mod:`~ecc.web.views` (sessions, approvals and tool calls as the pages show them),
:mod:`~ecc.web.routes` (the pages and their form actions), :mod:`~ecc.web.serve` (what
``ecc web`` adds to the remote server: the one-time sign-in link).
Nothing here is imported on the CLI's hot path.
"""
