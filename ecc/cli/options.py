"""The options of the hot commands, declared once for click and for the fast paths.

``ecc hook``, ``ecc run -d``/``ecc start``, the runner's ``ecc run-session`` and ``ecc memory
search`` answer their plain forms without importing click (:mod:`ecc.cli.fast`), which costs
about as much as their own work. Each
option is declared here once, as data: :func:`click_options` turns a table into click decorators
for the command's module, and :func:`parse` reads a command line with the same table on the
fast path. An option added here works on both paths; an option that only click can handle is
declared with ``fast=False`` and sends such a command line to click.

:func:`parse` accepts a strict subset of what click accepts and returns None for anything else
(``--help``, an unknown or repeated option, a value that looks like an option, ``--json=x``,
a missing value...), so the click command, with its own messages, decides every case the fast
path is not sure of. ``tests/foundation/test_runcall.py``, ``tests/vault/test_searchcall.py``
and ``tests/hooks/test_hook_command.py`` run each form through both paths.

This module imports neither click nor typing at import time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FLAG, SWITCH, VALUE, NUMBER, DIRECTORY = "flag", "switch", "value", "number", "directory"


class Option:
    """One option: its spellings, the parameter it sets, and how its value is read.

    ``kind``: ``flag`` (``--json``), ``switch`` (``--worktree/--no-worktree``: True, False or the
    default), ``value`` (a string), ``number`` (an integer), ``directory`` (a path that must not
    be a file).
    """

    __slots__ = (
        "dest", "fast", "flags", "help", "kind", "metavar", "multiple", "required", "value",
    )  # fmt: skip

    def __init__(
        self,
        *flags: str,
        dest: str,
        kind: str = VALUE,
        help: str = "",
        metavar: str | None = None,
        default: Any = None,
        multiple: bool = False,
        required: bool = False,
        fast: bool = True,
    ) -> None:
        self.flags = flags
        self.value = default
        self.dest = dest
        self.kind = kind
        self.help = help
        self.metavar = metavar
        self.multiple = multiple
        self.required = required
        self.fast = fast

    def default(self) -> Any:
        """The parameter's value when the option is not given."""
        if self.multiple:
            return []
        return False if self.kind == FLAG else self.value

    def spellings(self) -> dict[str, Any]:
        """Each way to write it on a command line, with the value a bare spelling sets
        (``...`` for a spelling that takes a value)."""
        if self.kind == SWITCH:
            on, _, off = self.flags[0].partition("/")
            return {on: True, off: False}
        if self.kind == FLAG:
            return dict.fromkeys(self.flags, True)
        return dict.fromkeys(self.flags, ...)


JSON = Option("--json", dest="as_json", kind=FLAG, help="Print JSON instead of text.")

HOOK = (
    Option(
        "--harness",
        dest="harness",
        required=True,
        help="The harness calling: claude, codex, gemini...",
    ),
    Option(
        "--event", dest="event", default="", help="Event name when the payload does not carry one."
    ),
    Option(
        "--managed",
        dest="managed",
        kind=FLAG,
        help="A managed session's own hook (set by ecc run; reads the policy of ECC_POLICY_DIR).",
    ),
)

START = (
    Option(
        "--harness",
        dest="harness",
        metavar="NAME",
        help="Harness (default: config default_harness, else detected in the project).",
    ),
    Option(
        "--profile", dest="profile", metavar="NAME", help="Agent profile from [agent_profiles]."
    ),
    Option(
        "--worktree/--no-worktree",
        dest="use_worktree",
        kind=SWITCH,
        help="Run in a fresh git worktree (default: auto_create_worktrees).",
    ),
    Option("--name", dest="name", default="", help="A label for the session."),
    Option(
        "--executor",
        dest="executor",
        metavar="NAME",
        help="Where the session runs: local, celery, … (default: config executor).",
    ),
    Option(
        "--cwd",
        dest="cwd",
        kind=DIRECTORY,
        help="Project directory (default: the current directory).",
    ),
    JSON,
    Option(
        "--remote",
        dest="remote",
        metavar="NAME",
        help="Run on the server NAME (see ecc remote add).",
        fast=False,
    ),
    # A group of sessions (ecc.cli.group_run): always click's, never the fast path's.
    Option(
        "--count",
        dest="count",
        kind=NUMBER,
        metavar="N",
        help="Start N sessions on TASK as a group (--harness a,b takes the harnesses in turn).",
        fast=False,
    ),
    Option(
        "--check",
        dest="check",
        metavar="COMMAND",
        help="A group's check: a shell command run in each worktree when its session ends.",
        fast=False,
    ),
    Option(
        "--check-timeout",
        dest="check_timeout",
        metavar="SECONDS",
        help="How long the check may run (default 600, or the template's).",
        fast=False,
    ),
    Option(
        "--template",
        dest="template",
        metavar="NAME",
        help="Start [orchestration_templates.NAME] as a group (TASK is then optional).",
        fast=False,
    ),
    Option(
        "--var",
        dest="variables",
        metavar="NAME=VALUE",
        multiple=True,
        help="A template variable ({{ NAME }} in its tasks); repeatable.",
        fast=False,
    ),
)
GROUP_OPTIONS = 5  # the last options of START: a group's, after --remote
DETACH = Option(
    "-d", "--detach", dest="detach", kind=FLAG, help="Return at once; the session keeps running."
)
RUN = (*START[: -1 - GROUP_OPTIONS], DETACH, *START[-1 - GROUP_OPTIONS :])

RUN_SESSION = (
    Option(
        "--session-id",
        dest="session_id",
        required=True,
        help="The session to run (read from the store).",
    ),
    Option(
        "--remote",
        dest="remote",
        kind=FLAG,
        help="Run as a worker of a pool (lease heartbeat, mirror checkout, branch push): for "
        "engines that start a command (Slurm's sbatch) rather than a Python call.",
        fast=False,
    ),
    Option(
        "--host",
        dest="host",
        metavar="NAME",
        help="The worker name recorded as runner_host.",
        fast=False,
    ),
)

SCOPE = Option(
    "--scope",
    dest="scopes",
    metavar="SCOPE",
    multiple=True,
    help="project, team or user (repeatable).",
)
SEARCH = (
    SCOPE,
    Option("--kind", dest="kinds", multiple=True, help="Only this kind (repeatable)."),
    Option(
        "--target-harness",
        dest="target_harness",
        help="Only memories targeted at this harness (or all).",
    ),
    Option("--limit", dest="limit", kind=NUMBER, help="Maximum results (1-100, default 20)."),
    Option(
        "--semantic",
        dest="semantic",
        kind=FLAG,
        help="Re-rank by meaning with the semantic ranker plugin (ecc-semantic).",
    ),
    JSON,
)


# -- the fast path ---------------------------------------------------------------------------


def parse(
    options: tuple[Option, ...],
    args: list[str],
    *,
    rest: str | None = None,
    dashdash: bool = True,
) -> dict[str, Any] | None:
    """The parameters of the plain command line ``args``, or None for click to decide.

    Words that are not options are collected under ``rest`` (and, with ``dashdash``, every word
    after ``--``); without ``rest`` a word sends the command line to click, and so does ``--``
    without ``dashdash``.
    """
    table: dict[str, tuple[Option, Any]] = {}
    for option in options:
        for spelling, value in option.spellings().items():
            table[spelling] = (option, value)
    params: dict[str, Any] = {option.dest: option.default() for option in options if option.fast}
    words: list[str] = []
    seen: set[str] = set()
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--" and rest is not None and dashdash:
            words.extend(args[index:])
            break
        if not token.startswith("-") or token == "-":
            if rest is None:
                return None
            words.append(token)
            continue
        spelling, equals, value = token.partition("=")
        found = table.get(spelling)
        if found is None or not found[0].fast:
            return None  # --help, --, an unknown or combined option: click's messages
        option, bare = found
        if bare is not ...:
            if equals:
                return None  # --json=x: click's error
            value = bare
        elif not equals:
            if index >= len(args):
                return None  # a missing value: click's error
            value = args[index]
            index += 1
        if bare is ... and value.startswith("-"):
            return None  # a value that looks like an option: click's reading decides
        if option.dest in seen and not option.multiple:
            return None  # a repeated option: click's rules
        seen.add(option.dest)
        converted = _convert(option, value)
        if converted is _REFUSED:
            return None
        if option.multiple:
            params[option.dest].append(converted)
        else:
            params[option.dest] = converted
    if any(option.required and not params[option.dest] for option in options):
        return None
    if rest is not None:
        params[rest] = words
    return params


_REFUSED = object()


def _convert(option: Option, value: Any) -> Any:
    if option.kind == NUMBER:
        try:
            return int(value)
        except ValueError:
            return _REFUSED
    if option.kind == DIRECTORY:
        return _directory(value)
    return value


def _directory(value: str) -> Any:
    """``value`` as click's ``Path(file_okay=False, path_type=Path)`` converts it, or
    :data:`_REFUSED` where click would refuse it (a file, an unreadable directory)."""
    import os
    import stat
    from pathlib import Path

    try:
        mode = os.stat(value).st_mode
    except OSError:
        return Path(value)  # a missing directory is the session code's error, as with click
    if not stat.S_ISDIR(mode) or not os.access(value, os.R_OK):
        return _REFUSED
    return Path(value)


# -- click -----------------------------------------------------------------------------------


def click_options(options: tuple[Option, ...]) -> Callable[[Any], Any]:
    """A decorator adding ``options`` to a click command, in their declared order."""
    import click

    def decorate(function: Any) -> Any:
        for option in reversed(options):
            function = click.option(*option.flags, option.dest, **_click_settings(option))(function)
        return function

    return decorate


def _click_settings(option: Option) -> dict[str, Any]:
    import click

    settings: dict[str, Any] = {"help": option.help}
    if option.metavar:
        settings["metavar"] = option.metavar
    if option.required:
        settings["required"] = True
    if option.multiple:
        settings["multiple"] = True
    if option.kind == FLAG:
        settings["is_flag"] = True
    elif option.kind == NUMBER:
        settings["type"] = _integer_type()
    elif option.kind == DIRECTORY:
        from pathlib import Path

        settings["type"] = click.Path(file_okay=False, path_type=Path)
    if option.value is not None or option.kind == SWITCH:
        # a switch's None means "not given" (config decides); elsewhere click 8.2+ reads an
        # explicit None as a default given, which a required option would accept
        settings["default"] = option.value
    return settings


def _integer_type() -> Any:
    import click

    class Integer(click.ParamType):
        """An integer, refused with the message the memory CLI has always printed."""

        name = "n"

        def convert(self, value: Any, param: Any, ctx: Any) -> int:
            try:
                return int(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not an integer.", param, ctx)

    return Integer()
