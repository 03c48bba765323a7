"""Children under their parent on the web pages: the sessions list shows each session's
children after it, marked, and a child's page links the session that started it."""

from __future__ import annotations

import json
from pathlib import Path

from ecc.store.open import open_store
from tests.web.conftest import Web, run_in


def test_children_are_listed_under_their_parent(web: Web) -> None:
    ids = []
    for task in ("true", "true", "true"):
        done = run_in(web, "run", "--harness", "shell", "--no-worktree", "--json", task)
        assert done.returncode == 0, done.stderr
        ids.append(json.loads(done.stdout)["id"])
    parent, child, other = ids
    store = open_store(Path(web.env["ECC_STATE_DIR"]) / "ecc.db")
    try:
        store.update_session(child, parent_id=parent)  # as the sessions MCP server records it
    finally:
        store.close()
    cookie = web.sign_in()
    page = web.request("GET", "/web/", cookie=cookie).text
    # newest first, except that the child follows its (older) parent, marked
    assert page.index(other) < page.index(parent) < page.index(child)
    row = page[page.index(parent) : page.index(child)]
    assert f'title="started by {parent}"' in row and "└─" in row
    shown = web.request("GET", f"/web/sessions/{child}", cookie=cookie).text
    assert "Started by" in shown and f'<a href="/web/sessions/{parent}">' in shown
    alone = web.request("GET", f"/web/sessions/{parent}", cookie=cookie).text
    assert "Started by" not in alone
