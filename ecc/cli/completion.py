"""What shell completion offers for the values ecc knows: session ids, harness and profile names.

Commands name these parameters alike (``session_ref``, ``harness``, ``profile``), so the
completers are attached here by name, once a command is loaded while a shell asks for
completions (``_ECC_COMPLETE`` set): no command module carries completion code, and an
ordinary run pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import click
    from click.shell_completion import CompletionItem

SESSION_LIMIT = 200  # the newest sessions offered; older ones can still be typed


def session_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Sessions whose id starts with ``incomplete``, newest first, each with its task."""
    from click.shell_completion import CompletionItem

    try:
        from ecc.runtime.config.view import view
        from ecc.store.open import open_store

        store = open_store(config=view())
        try:
            rows = store.list_sessions(None, limit=SESSION_LIMIT)
        finally:
            store.close()
    except Exception:  # completion must never print a traceback into the shell
        return []
    items: list[CompletionItem] = [
        CompletionItem(s.id, help=(s.task.splitlines() or [""])[0][:60])
        for s in rows
        if s.id.startswith(incomplete)
    ]
    if "latest".startswith(incomplete) and param.metavar and "latest" in param.metavar:
        items.append(CompletionItem("latest", help="the newest session"))
    return items


def harness_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """Harnesses the adapter plugins declare (the same registry sessions start from)."""
    from click.shell_completion import CompletionItem

    try:
        from ecc.sessions.harnesses import available

        names = sorted(available())
    except Exception:
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def profile_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    """The ``[agent_profiles.NAME]`` tables of the effective config."""
    from click.shell_completion import CompletionItem

    try:
        from ecc.runtime.config import model as config

        names = sorted(config.get_config().agent_profiles)
    except Exception:
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


COMPLETERS = {
    "session_ref": session_ids,
    "harness": harness_names,
    "profile": profile_names,
    "profile_name": profile_names,
}


def attach(command: click.Command) -> None:
    """Give ``command`` (and a group's subcommands) the completers of its parameters."""
    import click

    for param in command.params:
        completer = COMPLETERS.get(param.name or "")
        if completer is not None and param._custom_shell_complete is None:
            param._custom_shell_complete = completer
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            attach(sub)
