"""``ecc pr ID``: open a pull request for a session's pushed branch, and remember its URL."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say


@click.command("pr")
@click.argument("session_ref", metavar="ID")
@click.option("--draft", is_flag=True, help="Open it as a draft.")
@click.option("--base", help="The branch to merge into (default: the session's base branch).")
@click.option("--title", help="The title (default: the task's first line).")
@json_option
def pr_command(
    session_ref: str, draft: bool, base: str | None, title: str | None, as_json: bool
) -> None:
    """Open a pull request for a finished session's branch (push it first).

    The forge plugins open it (built in: GitHub, through gh). The URL is recorded on the
    session; asking again prints it.
    """
    from ecc.runtime.config.view import view
    from ecc.sessions import publishing
    from ecc.sessions.manager import find
    from ecc.store.open import open_store

    config = view()
    store = open_store(config=config)
    session = find(store, session_ref)
    result = publishing.open_pull_request(
        store, session, config, draft=draft, base=base, title=title
    )
    if as_json:
        emit_json(result)
    elif result["created"]:
        say(f"Pull request opened: {result['url']}")
    else:
        say(result["url"])
