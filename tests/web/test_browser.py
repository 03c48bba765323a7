"""The pages in a real headless Chromium (Debian's ``chromium``, driven by Playwright) against a
real ``ecc web`` with real shell sessions and a fake ``claude`` for follow-ups: sign in, live
output, an approval answered and the session going on, a follow-up, the phone width, and
hostile output shown as text with nothing run.

``ECC_WEB_SCREENSHOTS=1`` writes the screenshots into docs/images/ (docs/web.md shows them);
otherwise they go to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.approvals.conftest import ENFORCE, claude_call
from tests.sessions.fake_agent import FakeAgent
from tests.web.conftest import Web, launch_web, run_in, wait_for

ROOT = Path(__file__).resolve().parents[2]
SECS = 30_000  # Playwright waits, in ms: a bound for a loaded machine, not a measurement
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Web, FakeAgent]]:
    base = tmp_path_factory.mktemp("webui")
    agent = FakeAgent(base)
    web = launch_web(base / "web", extra_env={**agent.env, **ENFORCE})
    yield web, agent
    listed = run_in(web, "sessions", "--json")
    for session in json.loads(listed.stdout) if listed.returncode == 0 else []:
        run_in(web, "stop", session["id"], "--grace", "0")
    web.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("no chromium on PATH: `make test` installs Debian's chromium package")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    if os.environ.get("ECC_WEB_SCREENSHOTS"):
        target = ROOT / "docs" / "images"
        target.mkdir(parents=True, exist_ok=True)
        return target
    return tmp_path


class Watched:
    """A page whose console errors, uncaught errors and dialogs are kept."""

    def __init__(self, browser: Any, web: Web, viewport: dict[str, int]) -> None:
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.page.set_default_timeout(SECS)
        self.problems: list[str] = []
        self.page.on(
            "console", lambda m: self.problems.append(m.text) if m.type == "error" else None
        )
        self.page.on("pageerror", lambda e: self.problems.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.web = web

    def _dialog(self, dialog: Any) -> None:
        if dialog.type == "confirm":
            dialog.accept()
        else:
            self.problems.append(f"dialog: {dialog.message}")
            dialog.dismiss()

    def sign_in_with_token(self) -> None:
        self.page.goto(f"{self.web.url}/web/")
        assert self.page.url.endswith("/web/signin")
        self.page.fill("#token", self.web.token)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(f"{self.web.url}/web/")

    def close(self) -> None:
        self.context.close()


def start(web: Web, task: str, *more: str) -> str:
    done = run_in(web, "start", "--no-worktree", "--json", *more, task)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def held_call_task(gate: Path) -> str:
    """A shell session that prints, waits for ``gate``, asks ``ecc hook`` about a risky call
    (held for a person, as a harness's hook would be) and prints its answer: exit 0 allowed,
    2 denied (Claude Code's protocol)."""
    payload = json.dumps(claude_call()).replace("'", "")
    hook = f"{sys.executable} -m ecc hook --harness claude"
    return (
        f"echo first line; while [ ! -e {gate} ]; do sleep 0.05; done; echo second line; "
        f"echo '{payload}' | {hook} > hook.out 2>&1; echo hook exit $?"
    )


def test_sign_in_live_output_approval_and_follow_up(server, browser, shots: Path) -> None:
    web, agent = server
    watched = Watched(browser, web, DESKTOP)
    page = watched.page
    try:
        page.goto(web.link)  # the one-time link ecc web printed
        page.wait_for_url(f"{web.url}/web/")
        gate = web.root / "gate"
        session = start(web, held_call_task(gate), "--harness", "shell")
        page.wait_for_selector(f"a[href='/web/sessions/{session}']")  # the list updates live
        page.click(f"a[href='/web/sessions/{session}']")
        page.wait_for_selector("#output >> text=first line")
        gate.touch()
        page.wait_for_selector("#output >> text=second line")  # arrived without a reload
        page.wait_for_selector("#approval >> text=rm -rf node_modules")
        assert page.inner_text("#state") == "waiting"
        page.screenshot(path=str(shots / "web-session.png"))
        page.fill("#approval input[name=reason]", "fine, from the browser")
        page.click("#approval button.allow")
        page.wait_for_selector(".notice >> text=Allowed")
        page.wait_for_selector("#output >> text=hook exit 0")  # allowed: the call runs
        page.wait_for_selector("#state >> text=completed")

        agent_session = start(web, "draft the plan", "--harness", "claude")
        wait_for(
            lambda: '"completed"' in run_in(web, "status", agent_session, "--json").stdout,
            "the fake claude's first run",
        )
        page.goto(f"{web.url}/web/sessions/{agent_session}")
        page.wait_for_selector(".conversation >> text=turn 1: draft the plan")
        page.fill("#followup", "now do step one")
        page.click("form.send button")
        page.wait_for_selector(".notice >> text=follow-up run started")
        page.wait_for_selector(".conversation >> text=turn 2: now do step one", timeout=SECS)
        assert [c["prompt"] for c in agent.calls()][-1] == "now do step one"
        page.goto(f"{web.url}/web/")
        page.screenshot(path=str(shots / "web-sessions.png"))
        assert web.token not in page.content()
        assert watched.problems == []
    finally:
        watched.close()


def test_phone_width_inbox_and_hostile_output(server, browser, shots: Path) -> None:
    web, _ = server
    watched = Watched(browser, web, PHONE)
    page = watched.page
    try:
        watched.sign_in_with_token()
        hostile = start(
            web,
            "printf '%s\\n' '<script>document.title=\"pwned\";alert(1)</script>' "
            "'<img src=x onerror=alert(2)>'; printf '\\033[31mred\\033]0;t\\007\\n'",
            "--harness",
            "shell",
        )
        page.goto(f"{web.url}/web/sessions/{hostile}")
        page.wait_for_selector("#state >> text=completed")
        text = page.inner_text("#output")
        assert '<script>document.title="pwned";alert(1)</script>' in text
        assert "<img src=x onerror=alert(2)>" in text and "\\x1b[31mred" in text
        assert page.title() != "pwned" and page.locator("#output img").count() == 0

        background = "getComputedStyle(document.body).backgroundColor"
        light = page.evaluate(background)
        page.emulate_media(color_scheme="dark")  # prefers-color-scheme: dark
        assert page.evaluate(background) != light
        page.emulate_media(color_scheme="light")

        flood_gate = web.root / "gate-flood"
        flood = start(
            web, f"while [ ! -e {flood_gate} ]; do sleep 0.05; done; seq 1 2600", "--harness",
            "shell",
        )  # fmt: skip
        page.goto(f"{web.url}/web/sessions/{flood}")
        page.wait_for_selector("#stream-state >> text=Live")
        flood_gate.touch()
        page.wait_for_selector("#stream-state >> text=The session ended.")
        kept = page.locator("#output span.line")
        assert kept.count() <= 2000 and kept.last.inner_text() == "2600"  # bounded in the page
        assert int(kept.first.inner_text()) > 600

        gate = web.root / "gate-phone"
        gate.touch()
        held = start(web, held_call_task(gate), "--harness", "shell")
        page.goto(f"{web.url}/web/approvals")
        page.wait_for_selector(f".held >> text={held}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the inbox scrolls sideways at 390 px ({width} px)"
        page.screenshot(path=str(shots / "web-phone-approvals.png"))
        page.keyboard.press("Tab")  # keyboard reachable: the skip link comes first
        assert page.evaluate("document.activeElement.className") == "skip"
        page.click(".held button.deny")
        page.wait_for_selector(".notice >> text=Denied")
        page.goto(f"{web.url}/web/sessions/{held}")
        page.wait_for_selector("#output >> text=hook exit 2")  # denied: the harness is told
        page.goto(f"{web.url}/web/")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"the sessions page scrolls sideways ({width} px)"
        assert watched.problems == []
    finally:
        watched.close()


def test_the_diff_of_a_finished_session_is_committed_and_merged(server, browser, shots) -> None:
    import subprocess

    web, _ = server
    repo = web.root / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "T"],
        ["commit", "-q", "--allow-empty", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env=web.env)
    done = subprocess.run(
        [sys.executable, "-m", "ecc", "start", "--harness", "shell", "--worktree", "--json",
         "printf 'def add(a, b):\\n    return a + b\\n' > calc.py"],
        cwd=repo, env=web.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["id"]
    watched = Watched(browser, web, DESKTOP)
    page = watched.page
    try:
        watched.sign_in_with_token()
        page.goto(f"{web.url}/web/sessions/{session}")
        page.wait_for_selector("#state >> text=completed")
        page.click("text=Diff and merge")
        page.wait_for_selector(".file >> text=calc.py")
        assert page.inner_text(".hunk .add >> nth=1") == "+    return a + b"
        page.screenshot(path=str(shots / "web-diff.png"))
        page.click("button:text('Commit')")
        page.wait_for_selector(".notice >> text=Committed 1 file(s)")
        page.click("button:text('Merge')")  # asks first; the test says yes
        page.wait_for_selector(f".notice >> text=Merged ecc/{session} into main")
        assert (repo / "calc.py").exists()
        assert watched.problems == []
    finally:
        watched.close()
