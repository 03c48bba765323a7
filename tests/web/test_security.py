"""The web pages' security over plain HTTP against a real ``ecc web``: nothing without the
cookie, a cookie only from the token or the one-time link, CSRF on every action, escaped agent
output, the security headers, and the token never in a page."""

from __future__ import annotations

import re

from tests.web.conftest import Web, run_in, wait_for

PAGES = ["/web/", "/web/approvals", "/web/sessions/0123456789ab"]
FRAGMENTS = [
    "/web/-/sessions",
    "/web/-/approvals",
    "/web/-/sessions/0123456789ab/events",
    "/web/-/sessions/0123456789ab/more",
]
ACTIONS = [
    "/web/sessions/0123456789ab/send",
    "/web/sessions/0123456789ab/stop",
    "/web/sessions/0123456789ab/resume",
    "/web/approvals/0123456789ab",
    "/web/signout",
]
HOSTILE = (
    "printf '%s\\n' '<script>document.title=\"pwned\"</script><img src=x onerror=alert(1)>'; "
    "printf '\\033[31mred\\033]0;title\\007 \\342\\200\\256evil\\n'"
)


def start(web: Web, task: str) -> str:
    done = run_in(web, "start", "--harness", "shell", "--no-worktree", "--json", task)
    assert done.returncode == 0, done.stderr
    import json

    return str(json.loads(done.stdout)["id"])


def test_without_the_cookie_pages_redirect_and_the_rest_is_401(web: Web) -> None:
    for cookie in (None, "forged.0000", "x" * 50):
        for path in PAGES:
            page = web.request("GET", path, cookie=cookie)
            assert page.status == 303 and page.headers["location"] == "/web/signin", path
        for path in FRAGMENTS:
            assert web.request("GET", path, cookie=cookie).status == 401, path
        for path in ACTIONS:
            page = web.request("POST", path, cookie=cookie, form={"csrf": "x", "text": "hi"})
            assert page.status == 401, path
    # the bearer token does not open the pages, and the pages' cookie does not open the API
    bearer = {"Authorization": f"Bearer {web.token}"}
    assert web.request("GET", "/web/", headers=bearer).status == 303
    cookie = web.sign_in()
    assert web.request("GET", "/v1/sessions", cookie=cookie).status == 401
    assert web.request("GET", "/v1/sessions", headers=bearer).status == 200


def test_signing_in_with_the_token_gives_a_strict_http_only_cookie(web: Web) -> None:
    wrong = web.request("POST", "/web/signin", form={"token": "not-the-token-at-all"})
    assert wrong.status == 401 and "set-cookie" not in wrong.headers
    signed = web.request("POST", "/web/signin", form={"token": web.token})
    assert signed.status == 303 and signed.headers["location"] == "/web/"
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/web" in cookie
    assert "Secure" not in cookie  # plain HTTP on loopback; over TLS it is Secure
    value = re.search(r"ecc_web=([^;]+)", cookie).group(1)  # type: ignore[union-attr]
    assert web.token not in value
    page = web.request("GET", "/web/", cookie=value)
    assert page.status == 200 and "Sessions" in page.text
    headers = page.headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "unsafe-inline" not in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"
    for path in ("/web/", "/web/approvals", "/web/signin", "/web/static/ecc.js"):
        assert web.token not in web.request("GET", path, cookie=value).text
    # signed out, the same cookie opens nothing
    csrf = web.csrf(value)
    assert web.request("POST", "/web/signout", cookie=value, form={"csrf": csrf}).status == 303
    assert web.request("GET", "/web/", cookie=value).status == 303


def test_the_printed_link_signs_in_once_and_never_reaches_the_log(web: Web) -> None:
    path = web.link.split(str(web.port), 1)[1]
    first = web.request("GET", path)
    assert first.status == 303 and "ecc_web=" in first.headers["set-cookie"]
    again = web.request("GET", path)
    assert again.status == 401 and "set-cookie" not in again.headers
    nonce = path.split("nonce=", 1)[1]
    wait_for(lambda: any("GET /web/signin" in line for line in web.log), "the access log line")
    assert not any(nonce in line for line in web.log[1:] if "sign in at" not in line)
    assert not any(web.token in line for line in web.log)


def test_an_action_without_its_csrf_token_is_refused(web: Web) -> None:
    cookie = web.sign_in()
    session = start(web, "sleep 30")
    here = f"/web/sessions/{session}"
    for form in ({}, {"csrf": ""}, {"csrf": "guessed"}):
        refused = web.request("POST", f"{here}/stop", cookie=cookie, form=form)
        assert refused.status == 403, refused.text
    other = web.sign_in()  # another login's token is not this one's
    refused = web.request("POST", f"{here}/stop", cookie=cookie, form={"csrf": web.csrf(other)})
    assert refused.status == 403
    state = run_in(web, "status", session, "--json")
    assert '"state": "running"' in state.stdout or '"state": "pending"' in state.stdout
    stopped = web.request("POST", f"{here}/stop", cookie=cookie, form={"csrf": web.csrf(cookie)})
    assert stopped.status == 303 and stopped.headers["location"] == here
    shown = web.request("GET", here, cookie=cookie).text
    assert "is stopped" in shown


def test_hostile_output_is_escaped_text(web: Web) -> None:
    cookie = web.sign_in()
    session = start(web, HOSTILE)
    wait_for(
        lambda: '"state": "completed"' in run_in(web, "status", session, "--json").stdout,
        "the hostile session to finish",
    )
    page = web.request("GET", f"/web/sessions/{session}", cookie=cookie).text
    assert "&lt;script&gt;document.title" in page and "&lt;img src=x" in page
    assert "<script>document" not in page and "<img src=x" not in page
    assert "\x1b" not in page and "\u202e" not in page and "\x07" not in page
    assert "\\x1b[31mred" in page and "\\u202eevil" in page
    rows = web.request("GET", "/web/-/sessions", cookie=cookie).text
    assert "<script>" not in rows and "&lt;script&gt;" in rows
