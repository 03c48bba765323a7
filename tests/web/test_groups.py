"""A group of sessions in the web pages, in a real headless Chromium against a real ``ecc web``:
one row on the sessions page that opens the group's page (each session's changes and check
side by side), and the pick of one, merged with real git while the others are removed."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.web.test_browser import DESKTOP, Watched, browser, server, shots  # noqa: F401

TASK = 'echo "$ECC_SESSION_ID" > take.txt'


def test_a_group_is_one_row_that_opens_into_its_members_and_one_is_picked(
    server,  # noqa: F811
    browser,  # noqa: F811
    shots,  # noqa: F811
) -> None:
    web, _ = server
    repo = web.root / "grouprepo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "T"],
        ["commit", "-q", "--allow-empty", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True, env=web.env)

    def ecc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ecc", *args],
            cwd=repo, env=web.env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    ran = ecc("run", "--harness", "shell,shell", "--check", "grep -q 0 take.txt", TASK)
    group = json.loads(ecc("groups", "--json").stdout)[0]
    members = [m["session_id"] for m in group["members"]]
    has_zero = ["0" in sid for sid in members]
    assert ran.returncode == (0 if all(has_zero) else 1), ran.stderr
    watched = Watched(browser, web, DESKTOP)
    page = watched.page
    try:
        watched.sign_in_with_token()
        row = page.locator(f"tr.group >> text=▸ {group['id']}")
        row.wait_for()
        for member in members:  # folded into the group's row
            assert page.locator(f"#sessions a[href='/web/sessions/{member}']").count() == 0
        assert "group of 2" in page.inner_text("tr.group")
        row.click()
        page.wait_for_url(f"{web.url}/web/groups/{group['id']}")
        for member, zero in zip(members, has_zero, strict=True):
            line = page.locator(f"tr:has(a[href='/web/sessions/{member}'])")
            cells = line.locator("td").all_inner_texts()
            assert cells[3].startswith("completed") and cells[4:7] == ["1", "+1", "−0"]
            assert cells[9].startswith("passed" if zero else "failed (1)")
        page.screenshot(path=str(shots / "web-group.png"))
        chosen, other = members
        page.click(f"tr:has(a[href='/web/sessions/{chosen}']) button:text('Pick')")
        page.wait_for_selector(
            f".notice >> text=Merged ecc/{chosen} into main; removed 1 other worktree(s)"
        )
        assert page.locator("tr >> text=picked").count() == 1
        assert page.locator("button:text('Pick')").count() == 0  # picked: nothing more to pick
        assert (repo / "take.txt").read_text().strip() == chosen
        branches = subprocess.run(
            ["git", "branch", "--list", "ecc/*", "--format=%(refname:short)"],
            cwd=repo, env=web.env, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        assert branches == [f"ecc/{chosen}"] and other not in " ".join(branches)
        assert watched.problems == []
    finally:
        watched.close()
