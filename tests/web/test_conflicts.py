"""Conflicts on the web pages, against a real ``ecc web``: two shell sessions in worktrees
change the same file, a real daemon pass pauses the later one, the sessions table marks it,
its page shows the incident, and resolving it there (with the CSRF token) resumes it."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.web.conftest import Web, run_in, wait_for


def git(web: Web, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=web.root, capture_output=True, text=True, check=True, env=web.env
    )
    return done.stdout


def status(web: Web, session: str) -> dict[str, Any]:
    shown = run_in(web, "status", session, "--json")
    assert shown.returncode == 0, shown.stderr
    found: dict[str, Any] = json.loads(shown.stdout)
    return found


def writer(web: Web, text: str) -> str:
    task = f"printf '{text}\\n' > shared.txt && sleep 60"
    started = run_in(web, "start", "--harness", "shell", "--worktree", "--json", task)
    assert started.returncode == 0, started.stderr
    session: str = json.loads(started.stdout)["id"]

    def written() -> bool:
        row = status(web, session)
        path = row.get("worktree_path")
        if row["state"] != "running" or not path:
            return False
        target = web.root.joinpath(path, "shared.txt")
        return target.is_file() and target.read_text() == f"{text}\n"

    wait_for(written, f"session {session} to write shared.txt")
    return session


def test_a_paused_session_is_marked_and_resolved_from_its_page(web: Web) -> None:
    git(web, "init", "-q", "-b", "main")
    git(web, "config", "user.email", "t@example.com")
    git(web, "config", "user.name", "T")
    (web.root / "shared.txt").write_text("base\n")
    git(web, "add", "shared.txt")
    git(web, "commit", "-q", "-m", "start")
    first = writer(web, "first")
    second = writer(web, "second")
    try:
        passed = run_in(web, "daemon", "--once", "--json")
        assert passed.returncode == 0, passed.stderr
        wait_for(lambda: status(web, second)["state"] == "stopped", "the later one to pause")
        [incident] = status(web, second)["conflicts"]

        cookie = web.sign_in()
        table = web.request("GET", "/web/-/sessions", cookie=cookie).text
        assert f'href="/web/sessions/{second}#conflicts"' in table
        assert f'href="/web/sessions/{first}#conflicts"' in table  # both are part of it
        page = web.request("GET", f"/web/sessions/{second}", cookie=cookie)
        assert page.status == 200, page.text
        assert "Conflicts" in page.text and "shared.txt" in page.text
        assert f"{second} paused until {first} is merged or removed" in page.text

        here = f"/web/sessions/{second}/conflicts/{incident['id']}/resolve"
        assert web.request("POST", here, cookie=cookie, form={}).status == 403
        assert status(web, second)["state"] == "stopped"
        csrf = web.csrf(cookie, f"/web/sessions/{second}")
        done = web.request("POST", here, cookie=cookie, form={"csrf": csrf})
        assert done.status == 303, done.text
        shown = web.request("GET", done.headers["location"], cookie=cookie).text
        assert f"Conflict {incident['id']} resolved; session {second} resumed" in shown
        wait_for(lambda: status(web, second)["state"] == "running", "the paused one to resume")
        assert status(web, second)["open_conflict"] is None
    finally:
        for session in (first, second):
            run_in(web, "stop", session)
