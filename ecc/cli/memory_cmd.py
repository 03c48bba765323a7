"""``ecc memory``: recall, save and hand off portable ``ecc.memory.v1`` memories.

Human output goes through the terminal sanitiser (memory text comes from other agents); ``--json``
output is the documented ``ecc.memory.*.v1`` shapes. Heavy modules are imported inside commands.
"""

from __future__ import annotations

import os
from typing import Any

import click

from ecc.cli import options as declared
from ecc.cli.fast.search import argv_text
from ecc.cli.options import click_options
from ecc.contract.errors import EccError

USAGE = (  # the reference usage text, plus where --body-file may read from
    """\
ECC Memory Vault

Usage:
  ecc memory init [--scope project|team|user] [--json]
  ecc memory save --title <text> (--stdin | --body-file <path>) [options]
  ecc memory handoff --from <harness> --target <harness> --title <text> \
(--stdin | --body-file <path>) [options]
  ecc memory search [query] [--scope <scope>] [--target-harness <harness>] \
[--kind <kind>] [--limit <n>] [--json]
  ecc memory read <memory-id> [--scope <scope>] [--json]
  ecc memory doctor [--scope <scope>] [--json]

Recall:
  Default recall scopes: project and team; user scope must be requested explicitly
  with --scope user.

Write options:
  --scope <scope>            project (default), team, or user
  --source-harness <name>    Originating harness (default: ECC_MEMORY_HARNESS or unknown)
  --target <name>            Repeatable target harness; defaults to all
  --kind <kind>              context, decision, fact, handoff, lesson, note,
                             preference, or runbook
  --tag <tag>                Repeatable lowercase tag
  --link <memory-id>         Repeatable related memory ID
  --stdin                    Read the memory body from standard input
  --body-file <path>         Read the body from a regular, non-symlink file in this
                             repository or your home (not ~/.ssh and other secret stores)

MCP:
  ecc-memory-mcp             Start the opt-in local stdio MCP server

Safety:
  Tool-created memories are always unreviewed context, never executable policy.
  Writes are create-only and reject known credential shapes.
"""
)


def check_option_values(args: list[str], value_options: set[str]) -> None:
    """Refuse a value option whose value is missing or starts with ``--``, as the reference does
    (``save --title --json`` is not a memory titled ``--json``; nor is a title ``-----BEGIN``)."""
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            return  # the rest are words (ecc's end of options)
        if word in value_options:
            if index >= len(args) or args[index].startswith("--"):
                raise EccError(f"{word} requires a value.")
            index += 1


class MemoryCommand(click.Command):
    """Reads options as the reference does: ``Unknown option: --trust``, ``--title requires a
    value.`` for a value that looks like an option, U+FFFD for argv bytes that are not UTF-8."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        value_options = {
            flag
            for param in self.params
            if isinstance(param, click.Option) and not param.is_flag
            for flag in param.opts
        }
        check_option_values(args, value_options)
        words = []
        for index, word in enumerate(args):
            raw = index > 0 and args[index - 1] == "--body-file"  # a path: its bytes as they are
            words.append(word if raw or word.startswith("--body-file=") else argv_text(word))
        try:
            return super().parse_args(ctx, words)
        except click.NoSuchOption as exc:
            raise click.UsageError(f"Unknown option: {exc.option_name}", ctx) from None


class HelpCommand(MemoryCommand):
    """``ecc memory help [anything]``: the usage, as the reference prints it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return []


class MemoryGroup(click.Group):
    command_class = MemoryCommand

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write(USAGE)
        formatter.write("\nCommands:\n")
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                formatter.write(f"  {name:<10} {command.get_short_help_str(limit=70)}\n")


def _dry_run(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        os.environ["ECC_DRY_RUN"] = "1"


dry_run_option = click.option(
    "--dry-run",
    is_flag=True,
    expose_value=False,
    callback=_dry_run,
    help="Refuse to write (same as ECC_DRY_RUN=1).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
scope_option = click_options((declared.SCOPE,))


@click.group(
    "memory",
    cls=MemoryGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@dry_run_option
@click.pass_context
def memory_group(ctx: click.Context) -> None:
    """Recall, save and hand off portable memory (ecc.memory.v1)."""
    if ctx.invoked_subcommand is None:  # `ecc memory` alone: the usage, exit 0 (the reference's)
        click.echo(ctx.get_help())


@memory_group.command("help", cls=HelpCommand, hidden=True)
@click.pass_context
def help_command(ctx: click.Context) -> None:
    """Print the usage."""
    assert ctx.parent is not None
    click.echo(ctx.parent.get_help())


# -- helpers ------------------------------------------------------------------------------------


def _guard_write(command: str) -> None:
    if os.environ.get("ECC_DRY_RUN") == "1":
        raise EccError(f"memory {command} is disabled in dry-run mode; no files were written.")


def _service() -> Any:
    from ecc.vault.service import open_cli_service

    return open_cli_service()


def _emit_json(payload: Any) -> None:
    from ecc.runtime.terminal import emit_json

    emit_json(payload)


def _say(*parts: Any) -> None:
    from ecc.runtime.terminal import sanitize
    from ecc.vault.format import well_formed

    # a lone surrogate (a title from JSON) prints as U+FFFD, as Node prints it
    click.echo(well_formed("".join(sanitize(part) for part in parts)))


def _no_positionals(command: str, extra: tuple[str, ...]) -> None:
    if extra:
        raise EccError(f"{command} does not accept positional arguments.")


# -- init ---------------------------------------------------------------------------------------


@memory_group.command("init")
@click.argument("extra", nargs=-1, required=False, metavar="")
@scope_option
@json_option
@dry_run_option
def init_command(extra: tuple[str, ...], scopes: tuple[str, ...], as_json: bool) -> None:
    """Create the vault directories of the given scopes (default project and team)."""
    _guard_write("init")
    service = _service()
    _no_positionals("init", extra)
    result = service.init(list(scopes) or None)
    if as_json:
        _emit_json(result)
        return
    _say("Initialized ECC memory scopes: ", ", ".join(result["scopes"]))
    for scope in result["scopes"]:
        _say("- ", scope, ": ", result["roots"][scope])


# -- save / handoff -----------------------------------------------------------------------------


def _write_options(function: Any) -> Any:
    decorators = [
        click.argument("extra", nargs=-1, required=False, metavar=""),
        click.option("--title", help="Title (required, at most 200 characters)."),
        click.option("--stdin", "use_stdin", is_flag=True, help="Read the body from stdin."),
        click.option(
            "--body-file",
            help="Read the body from a regular, non-symlink file in this repository or your home.",
        ),
        click.option("--kind", "kinds", multiple=True, help="Memory kind (default note)."),
        scope_option,
        click.option("--source-harness", help="Originating harness."),
        click.option("--from", "from_harness", help="Originating harness (wins)."),
        click.option("--target", "targets", multiple=True, help="Target harness (repeatable)."),
        click.option("--tag", "tags", multiple=True, help="Lowercase tag (repeatable)."),
        click.option("--link", "links", multiple=True, help="Related memory ID (repeatable)."),
        json_option,
        dry_run_option,
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def _write(command: str, options: dict[str, Any]) -> None:
    _guard_write(command)
    service = _service()
    _no_positionals(command, options["extra"])
    if not options["title"]:
        raise EccError("--title is required.")
    if command == "handoff":
        if not options["from_harness"]:
            raise EccError("--from is required for handoffs.")
        if not options["targets"]:
            raise EccError("At least one --target is required for handoffs.")
    if options["use_stdin"] == (options["body_file"] is not None):
        raise EccError("Choose exactly one memory body source: --stdin or --body-file.")
    from ecc.vault import safefs
    from ecc.vault.format import MAX_BODY_BYTES

    if options["use_stdin"]:
        body = safefs.read_bounded_stdin(MAX_BODY_BYTES)
    else:
        from ecc.cli.body_file import check_body_file

        path = os.path.abspath(options["body_file"])
        check_body_file(path)
        body = safefs.read_regular_text_file(path, MAX_BODY_BYTES, "--body-file")
        check_body_file(path)  # still there: a directory swapped meanwhile cannot redirect it
    kind = "handoff"
    if command != "handoff":
        if len(options["kinds"]) > 1:
            raise EccError("--kind may be provided only once.")
        kind = options["kinds"][0] if options["kinds"] else "note"
    if len(options["scopes"]) > 1:
        raise EccError("--scope may be provided only once.")
    source = (
        options["from_harness"]
        or options["source_harness"]
        or os.environ.get("ECC_MEMORY_HARNESS")
        or "unknown"
    )
    result = service.save(
        {
            "title": options["title"],
            "body": body,
            "kind": kind,
            "scope": options["scopes"][0] if options["scopes"] else "project",
            "sourceHarness": source,
            "targetHarnesses": list(options["targets"]) or ["all"],
            "tags": list(options["tags"]),
            "links": list(options["links"]),
        }
    )
    memory = {key: value for key, value in result["memory"].items() if key != "body"}
    if options["as_json"]:
        _emit_json(
            {"schemaVersion": "ecc.memory.write.v1", "memory": memory, "path": result["path"]}
        )
        return
    _say("Saved unreviewed ", memory["kind"], ": ", memory["title"])
    _say("ID: ", memory["id"])
    _say("Path: ", result["path"])


@memory_group.command("save")
@_write_options
def save_command(**options: Any) -> None:
    """Save an unreviewed memory (create-only)."""
    _write("save", options)


@memory_group.command("handoff")
@_write_options
def handoff_command(**options: Any) -> None:
    """Hand work off to another harness (kind handoff; --from and --target required)."""
    _write("handoff", options)


# -- search / read / doctor ---------------------------------------------------------------------


@memory_group.command("search")
@click.argument("query", nargs=-1)
@click_options(declared.SEARCH)
def search_command(
    query: tuple[str, ...],
    scopes: tuple[str, ...],
    kinds: tuple[str, ...],
    target_harness: str | None,
    limit: int | None,
    semantic: bool,
    as_json: bool,
) -> None:
    """Search active memories (default scopes project and team). Use -- before a query
    that starts with a dash."""
    from ecc.cli.fast import search as searchcall

    chosen: dict[str, Any] = {"query": list(query), "scopes": list(scopes), "kinds": list(kinds)}
    chosen.update(target_harness=target_harness, limit=limit, semantic=semantic)
    result = searchcall.search(chosen)
    if as_json:
        _emit_json(result)
        return
    for line in searchcall.render(result):
        click.echo(line)


@memory_group.command("read")
@click.argument("ids", nargs=-1, metavar="MEMORY_ID")
@scope_option
@json_option
def read_command(ids: tuple[str, ...], scopes: tuple[str, ...], as_json: bool) -> None:
    """Read one memory (any status) and its backlinks."""
    service = _service()
    if len(ids) != 1:
        raise EccError("read requires exactly one memory ID.")
    result = service.read(ids[0], scopes=list(scopes) or None)
    if as_json:
        _emit_json(result)
        return
    memory = result["memory"]
    _say("[", memory["trust"], "] ", memory["title"])
    _say("ID: ", memory["id"])
    if memory["status"] != "active":
        _say("Status: ", memory["status"])
    _say("Source: ", memory["sourceHarness"])
    _say("Targets: ", ", ".join(memory["targetHarnesses"]))
    _say("")
    _say(memory["body"])
    _say("")
    backlinks = [link["id"] for link in result["backlinks"]]
    _say("Backlinks: ", ", ".join(backlinks) if backlinks else "none")


@memory_group.command("doctor")
@click.argument("extra", nargs=-1, required=False, metavar="")
@scope_option
@json_option
@click.option("--strict", is_flag=True, help="Exit 1 when issues are found (for CI).")
@click.option(
    "--fix-temp",
    is_flag=True,
    help="First remove temp files that writers killed mid-save left (older than 10 minutes).",
)
def doctor_command(
    extra: tuple[str, ...], scopes: tuple[str, ...], as_json: bool, strict: bool, fix_temp: bool
) -> None:
    """Audit the vault: invalid files, duplicate IDs, broken links, symlinks, leftover temp
    files. Changes nothing, except --fix-temp removing stale temp files."""
    service = _service()
    _no_positionals("doctor", extra)
    removed = service.remove_stale_temps(list(scopes) or None) if fix_temp else None
    result = service.doctor(scopes=list(scopes) or None)
    if removed is not None:
        result["removedTempFiles"] = removed
    if as_json:
        _emit_json(result)
    else:
        if removed is not None:
            _say("Removed stale temp files: ", len(removed))
        _say("ECC memory doctor: ", "PASS" if result["ok"] else "ISSUES FOUND")
        _say("Memories: ", result["memoryCount"])
        _say("Invalid files: ", result["invalidFileCount"])
        _say("Duplicate IDs: ", result["duplicateIdCount"])
        _say("Broken links: ", result["brokenLinkCount"])
        _say("Skipped symlinks: ", result["skippedSymlinkCount"])
        if result["truncated"]:
            _say("Scan budget reached: not every file was inspected.")
        if result["tempFileCount"]:
            _say("Leftover temp files: ", result["tempFileCount"], " (writers killed mid-save;")
            _say("  ecc memory doctor --fix-temp removes those older than 10 minutes)")
            for path in result["tempFiles"]:
                _say("  ", path)
    if strict and not result["ok"]:
        raise SystemExit(1)
