"""``ecc completion SHELL``: print the shell completion script (click's own machinery)."""

from __future__ import annotations

import click


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_command(shell: str) -> None:
    """Print the completion script for SHELL.

    Enable it with, e.g., ``eval "$(ecc completion bash)"`` in ~/.bashrc. Beyond commands and
    options it completes session ids (newest first), harness names and profile names.
    """
    from click.shell_completion import get_completion_class

    from ecc.cli.app import cli

    completion_class = get_completion_class(shell)
    assert completion_class is not None  # the Choice above admits only supported shells
    click.echo(completion_class(cli, {}, "ecc", "_ECC_COMPLETE").source())
