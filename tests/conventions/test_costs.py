"""Costs read to the cent or better on every front: one formatter, no ``$0.00`` for a cost."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ecc.runtime.money import format_cost
from tests.conftest import run_ecc
from tests.conventions.conftest import wait_finished


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0, "$0.00"),
        (0.0042, "$0.0042"),
        (0.00004, "<$0.0001"),
        (0.0099, "$0.0099"),
        (0.01, "$0.01"),
        (0.4242, "$0.42"),
        (12.5, "$12.50"),
        (1234.567, "$1,234.57"),
    ],
)
def test_format_cost(usd: float, text: str):
    assert format_cost(usd) == text


def test_every_front_shows_a_small_cost(git_repo: Path):
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    result = run_ecc("start", "--no-worktree", "--harness", "shell", "true", cwd=git_repo)
    session_id = result.stdout.strip()
    wait_finished(session_id, git_repo)
    store = open_store(config=view())
    try:
        store.add_usage(session_id, 10, 20, 0.0042)
        session = store.get_session(session_id)
    finally:
        store.close()
    assert session is not None

    status = run_ecc("status", session_id, cwd=git_repo).stdout
    assert re.search(r"Cost:\s+\$0\.0042", status), status
    budget = run_ecc("budget", "--all", cwd=git_repo).stdout
    assert "$0.0042" in budget and "$0.00 " not in budget, budget

    from ecc.tui import data as tui
    from ecc.web import views
    from ecc.web.render import render

    config = view()
    cells = tui.row_cells(session, None, config, datetime.now(UTC))
    assert cells["cost"].plain == "$0.0042"
    assert "$0.0042" in tui.status_text([session], config).plain
    page = render("_session_rows.html", rows=[views.row(session, 0)], total=1, waiting=0)
    assert "$0.0042" in page
