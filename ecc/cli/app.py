"""The ``ecc`` command line: a click group whose subcommands are imported only when used.

Each command lives in its own module under ``ecc.cli``; :data:`COMMANDS` maps a command name to
``module:attribute``. Plugins add commands through the ``ecc_register_commands`` hook; those are
loaded only when a name is not a built-in one (or for ``--help``), so ``ecc --version`` and
``ecc hook`` stay fast.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ecc import VERSION_TEXT, __version__
from ecc.contract.errors import EccError

# name -> (module, attribute, one-line help shown without importing the module; "" hides it)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "config": ("ecc.cli.config_cmd", "config_group", "Show, get and set configuration."),
    "trust": ("ecc.cli.trust_cmd", "trust_command", "Approve a repository's .ecc/config.toml."),
    "plugins": ("ecc.cli.plugins_cmd", "plugins_command", "List installed plugins."),
    "install": ("ecc.cli.install_cmd", "install_command", "Install plugins where ecc runs (pip)."),
    "uninstall": ("ecc.cli.install_cmd", "uninstall_command", "Uninstall plugins from there."),
    "doctor": ("ecc.cli.doctor_cmd", "doctor_command", "Check the environment ecc runs in."),
    "completion": ("ecc.cli.completion_cmd", "completion_command", "Print shell completion."),
    # memory vault
    "memory": ("ecc.cli.memory_cmd", "memory_group", "Recall, save and hand off portable memory."),
    # sessions
    "run": ("ecc.cli.run_cmd", "run_command", "Run an agent on a task as a managed session."),
    "start": ("ecc.cli.run_cmd", "start_command", "Start a session detached (ecc run -d)."),
    "sessions": ("ecc.cli.sessions_cmd", "sessions_command", "List sessions."),
    "status": ("ecc.cli.sessions_cmd", "status_command", "Show one session in detail."),
    "logs": ("ecc.cli.sessions_cmd", "logs_command", "Show or follow a session's output."),
    "tools": ("ecc.cli.tools_cmd", "tools_command", "List a session's tool calls and risk."),
    "stop": ("ecc.cli.sessions_cmd", "stop_command", "Stop a running session."),
    "resume": ("ecc.cli.sessions_cmd", "resume_command", "Resume a stopped or failed session."),
    "send": ("ecc.cli.send_cmd", "send_command", "Give a session's agent its next instruction."),
    "rm": ("ecc.cli.sessions_cmd", "rm_command", "Forget a finished session."),
    "messages": ("ecc.cli.messages_cmd", "messages_group", "Leave and read sessions' messages."),
    "worktree": (
        "ecc.cli.worktree_cmd",
        "worktree_group",
        "Inspect, diff, merge, prune worktrees.",
    ),
    "pr": ("ecc.cli.pr_cmd", "pr_command", "Open a pull request for a session's branch."),
    "daemon": ("ecc.cli.daemon_cmd", "daemon_command", "Recover crashed sessions, start queued."),
    "schedule": ("ecc.cli.schedule_cmd", "schedule_group", "Start tasks on a cron schedule."),
    "conflicts": (
        "ecc.cli.conflicts_cmd",
        "conflicts_group",
        "Sessions that changed the same file.",
    ),
    "group": ("ecc.cli.group_cmd", "group_group", "Compare a group of sessions; pick one."),
    "groups": ("ecc.cli.group_cmd", "groups_command", "List groups of sessions."),
    "run-session": ("ecc.cli.runner_cmd", "run_session_command", ""),
    # observability
    "risk": ("ecc.cli.risk_cmd", "risk_group", "Score tool calls for risk."),
    "hook": ("ecc.cli.hook_cmd", "hook_command", ""),
    "hooks": ("ecc.cli.hooks_cmd", "hooks_group", "Install ecc's hooks into a harness."),
    "approvals": ("ecc.cli.approvals_cmd", "approvals_command", "Tool calls waiting for you."),
    "approve": ("ecc.cli.approvals_cmd", "approve_command", "Let a held tool call run."),
    "deny": ("ecc.cli.approvals_cmd", "deny_command", "Refuse a held tool call."),
    "notify": ("ecc.cli.notify_cmd", "notify_group", "Test and inspect notifications."),
    "budget": ("ecc.cli.budget_cmd", "budget_command", "Token and cost use against budgets."),
    "export": ("ecc.cli.export_cmd", "export_command", "Send finished sessions to exporters."),
    "remote": ("ecc.cli.remote_cmd", "remote_group", "Serve or use the HTTP API for sessions."),
    "web": ("ecc.cli.web_cmd", "web_command", "Watch and answer sessions in a browser."),
    "dashboard": (
        "ecc.cli.dashboard_cmd",
        "dashboard_command",
        "Watch and steer every session (TUI).",
    ),
    "harness": (
        "ecc.cli.harness_cmd",
        "harness_group",
        "List harnesses and show their command lines.",
    ),
    "skills": (
        "ecc.cli.skills_cmd",
        "skills_group",
        "Validate and install SKILL.md skills into harnesses.",
    ),
    "mcp": ("ecc.cli.mcp_cmd", "mcp_group", "Register ecc-memory-mcp in a harness's config."),
    "sync": ("ecc.cli.sync_cmd", "sync_command", "Install the shared rules, commands, hooks."),
}


class CliError(click.ClickException):
    """An :class:`EccError` on its way to the terminal: sanitised, with its exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        from ecc.runtime.terminal import sanitize

        super().__init__(sanitize(message))
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it per class


class LazyGroup(click.Group):
    """A group whose subcommands come from :data:`COMMANDS` and plugins, imported on demand."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy
        self._plugin_commands_loaded = False

    def _load_plugin_commands(self) -> None:
        if self._plugin_commands_loaded:
            return
        self._plugin_commands_loaded = True
        from ecc.runtime.plugins.loader import get_plugins

        get_plugins().hook.ecc_register_commands(cli=self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        try:
            self._load_plugin_commands()
        except EccError:
            pass  # a broken config must not break --help; the command itself will report it
        return sorted({*self.lazy, *self.commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name in self.lazy:
            module_name, attribute, _ = self.lazy[name]
            import importlib

            command = getattr(importlib.import_module(module_name), attribute)
            if "_ECC_COMPLETE" in os.environ:  # a shell asking: session ids, harnesses, profiles
                from ecc.cli.completion import attach

                attach(command)
            self.add_command(command, name)
            return command
        self._load_plugin_commands()
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                if self.lazy[name][2]:  # an empty help string marks a hidden command
                    rows.append((name, self.lazy[name][2]))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=60)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EccError as exc:
            raise CliError(exc.message, exc.exit_code) from None


def _set_dry_run(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        import os

        os.environ["ECC_DRY_RUN"] = "1"


def _apply_overrides(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> None:
    if values:
        from ecc.runtime.config import model as config

        config.set_cli_overrides(values)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "--version", message=VERSION_TEXT)
@click.option(
    "-c",
    "--config",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    expose_value=False,
    callback=_apply_overrides,
    help="Override a config value for this run (the last, highest layer). Repeatable.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    expose_value=False,
    callback=_set_dry_run,
    help="Refuse to write (sets ECC_DRY_RUN=1 for the command, as the reference's router does).",
)
@click.option("-v", "--verbose", count=True, help="Log more on stderr: -v info, -vv debug.")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    help="Log at LEVEL on stderr and in the daemon's and runners' logs (also ECC_LOG_LEVEL).",
)
@click.pass_context
def cli(ctx: click.Context, verbose: int, log_level: str | None) -> None:
    """ecc: a control plane for AI coding agents.

    Portable memory shared by every agent, sessions in their own worktrees, risk scoring of tool
    calls, notifications, and plugins for every harness.
    """
    if verbose or log_level or os.environ.get("ECC_LOG_LEVEL"):  # else logging stays unloaded
        from ecc.runtime import logs

        level = logs.level_from_flags(verbose, log_level) or logs.level_from_env()
        if level:
            logs.set_level(level)
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():  # a person at a terminal: the dashboard
            ctx.invoke(ctx.command.get_command(ctx, "dashboard"))  # type: ignore[attr-defined]
            return
        click.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    cli.main(args=args, prog_name="ecc")
