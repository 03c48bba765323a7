"""The New session page over HTTP against a real ``ecc web``: a session started from the form
runs like any other; the API's own limits (``remote.allowed_roots``) refuse the rest."""

from __future__ import annotations

from tests.web.conftest import Web, wait_for


def test_a_session_started_from_the_form_runs_and_the_allowed_roots_hold(web: Web) -> None:
    cookie = web.sign_in()
    form_page = web.request("GET", "/web/new", cookie=cookie).text
    assert f'<option value="{web.root}">' in form_page and '<option value="shell">' in form_page
    csrf = web.csrf(cookie, "/web/new")
    fields = {"csrf": csrf, "repository": str(web.root), "harness": "shell"}
    started = web.request(
        "POST", "/web/new", cookie=cookie, form={**fields, "task": "echo made in the web"}
    )
    assert started.status == 303 and started.headers["location"].startswith("/web/sessions/")
    here = started.headers["location"]
    wait_for(
        lambda: "made in the web</span>" in web.request("GET", here, cookie=cookie).text,
        "the session's output on its page",
    )
    for repository, said in (
        ("/etc", "repository is outside remote.allowed_roots"),
        ("relative/path", "Not started: repository: String should match pattern"),
    ):
        refused = web.request(
            "POST", "/web/new", cookie=cookie, form={**fields, "repository": repository,
                                                      "task": "true"},
        )  # fmt: skip
        assert refused.status == 303 and refused.headers["location"] == "/web/new"
        assert said in web.request("GET", "/web/new", cookie=cookie).text
    assert web.request("POST", "/web/new", cookie=cookie, form={"task": "true"}).status == 403
