"""The diff page and the worktree actions over HTTP against a real ``ecc web``: a finished shell
session's worktree shown per file with its hunks (escaped), merged into its base with the CSRF
token (after its commit, which the merge asks for first), refused without the token."""

from __future__ import annotations

import json
import subprocess

from tests.web.conftest import Web, run_in, wait_for


def git(web: Web, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=web.root, capture_output=True, text=True, check=True, env=web.env
    )
    return done.stdout


def test_a_finished_session_s_diff_is_shown_per_file_and_merged(web: Web) -> None:
    git(web, "init", "-q", "-b", "main")
    git(web, "config", "user.email", "t@example.com")
    git(web, "config", "user.name", "T")
    (web.root / "README").write_text("one\ntwo\n")
    git(web, "add", "README")
    git(web, "commit", "-q", "-m", "start")
    task = "printf 'one\\n2\\n' > README; printf '<b>bold</b>\\n' > new.html"
    started = run_in(web, "start", "--harness", "shell", "--worktree", "--json", task)
    assert started.returncode == 0, started.stderr
    session = json.loads(started.stdout)["id"]
    wait_for(
        lambda: '"completed"' in run_in(web, "status", session, "--json").stdout,
        "the session to finish",
    )
    cookie = web.sign_in()
    page = web.request("GET", f"/web/sessions/{session}/diff", cookie=cookie)
    assert page.status == 200, page.text
    assert "README" in page.text and "new.html" in page.text and "2 file(s)" in page.text
    assert '<span class="del">-two</span>' in page.text
    assert '<span class="add">+2</span>' in page.text
    assert '<span class="add">+&lt;b&gt;bold&lt;/b&gt;</span>' in page.text
    assert "<b>bold</b>" not in page.text

    here = f"/web/sessions/{session}/merge"
    assert web.request("POST", here, cookie=cookie, form={}).status == 403
    assert "new.html" not in git(web, "ls-files")
    csrf = web.csrf(cookie, f"/web/sessions/{session}/diff")
    refused = web.request("POST", here, cookie=cookie, form={"csrf": csrf})
    shown = web.request("GET", refused.headers["location"], cookie=cookie).text
    assert "merge refused: the session worktree has uncommitted changes" in shown
    committed = web.request(
        "POST", f"/web/sessions/{session}/commit", cookie=cookie, form={"csrf": csrf}
    )
    shown = web.request("GET", committed.headers["location"], cookie=cookie).text
    assert "Committed 2 file(s)" in shown
    merged = web.request("POST", here, cookie=cookie, form={"csrf": csrf})
    assert merged.status == 303, merged.text
    shown = web.request("GET", merged.headers["location"], cookie=cookie).text
    assert f"Merged ecc/{session} into main" in shown
    assert "new.html" in git(web, "ls-files")
    assert (web.root / "README").read_text() == "one\n2\n"
