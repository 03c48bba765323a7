"""The contract's data types that a tool call's hook never builds (see :mod:`ecc.contract.types`).

Import them from ``ecc.contract.types``, as always: it hands them out from here on first use, so
``ecc hook`` does not pay for defining them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecc.contract.types import Config
    from ecc.runtime.config.model import AgentProfile


@dataclass(frozen=True)
class HarnessInfo:
    """What a harness adapter declares about one harness it runs."""

    name: str
    program: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    # Surfaces for the compliance matrix: direct, structured_output, resume, hooks, enforcement,
    # session_hooks (the adapter applies ``LaunchContext.enforcement`` to the harness process),
    # session_mcp (it registers ``LaunchContext.mcp_servers`` for the harness process),
    # mcp, skills, and the profile fields the adapter maps to real flags.
    capabilities: frozenset[str] = frozenset()
    profile_fields: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SessionEnforcement:
    """ecc's tool-call hook as a managed session applies it to its own harness process.

    An adapter whose harness declares the ``session_hooks`` capability puts :attr:`command`
    into the harness's hook configuration *for this process only* (a flag, an environment
    variable, a file under :attr:`directory`), never into a file of the repository or of the
    user: so the session is enforced whether or not ``ecc hooks install`` was run or committed.
    """

    command: str  # the shell command line the harness runs before each tool call
    argv: tuple[str, ...]  # the same command as argv, for harnesses that take a list
    timeout_secs: int  # what the harness must allow the hook: a held call waits for a person
    directory: Path  # private to this session: for settings files the harness must read
    # The variables the hook reads, as the runner sets them in the harness's environment: for
    # a harness that filters what its hooks inherit, pass exactly these through.
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionMcpServer:
    """An MCP server ecc runs beside one managed session's harness (the sessions server).

    An adapter whose harness declares the ``session_mcp`` capability registers it *for this
    process only* (a flag, a ``--config`` override, a file under :attr:`directory`), under
    :attr:`name`, starting :attr:`argv` with :attr:`env` added to what the harness gives its
    MCP servers: these variables bind the server to its session. The runner sets them in the
    harness's own environment too, so an adapter may pass them through by name.
    """

    name: str  # the server's name in the harness (tools appear as mcp__NAME__TOOL in Claude)
    argv: tuple[str, ...]  # absolute program first
    env: dict[str, str] = field(default_factory=dict)
    directory: Path | None = None  # private to this session: for config files the harness reads


@dataclass
class LaunchContext:
    """Everything an adapter needs to build a command for one session."""

    session_id: str
    task: str
    working_dir: Path
    project_dir: Path
    config: Config
    profile: AgentProfile | None = None
    session_name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # Set when the session's harness declares ``session_hooks``: apply it (see the class).
    enforcement: SessionEnforcement | None = None
    # Set when the session's harness declares ``session_mcp``: register each (see the class).
    mcp_servers: tuple[SessionMcpServer, ...] = ()

    def __post_init__(self) -> None:
        if not self.session_name:
            self.session_name = f"ecc-{self.session_id}"


@dataclass
class ProfileTranslation:
    """How a profile lands on a harness: flags, prompt text, and refused fields."""

    args: list[str] = field(default_factory=list)
    prompt_prefix: str = ""
    refused: dict[str, str] = field(default_factory=dict)  # field -> why


@dataclass
class OutputEvent:
    """One structured event parsed from a harness's output stream.

    ``kind`` is one of: ``harness_session`` (data: id), ``tool_call`` (data: tool, input, id),
    ``usage`` (data: input_tokens, output_tokens, cost_usd, cumulative), ``final`` (data: text,
    optional delta), ``error`` (data: message).

    ``usage.cumulative`` False: add it to the session's totals; True: it is the harness session's
    running total so far (replace the previously reported total, do not add). ``final.delta``
    True: the text extends the previous final text.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Notification:
    """An event for notifiers: ``session_started``, ``session_completed``, ``session_failed``,
    ``budget_alert``, ``approval_request``, ``session_conflict``."""

    event: str
    title: str
    body: str
    session_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class PullRequestProposal:
    """What ``ecc pr`` asks a forge to open: a session's pushed branch against its base branch.

    ``remote_url`` is the push URL of ``remote`` as git has it (it may carry credentials: never
    print or log it); ``worktree_path`` is None when the session's worktree was removed.
    """

    session_id: str
    repo_root: Path
    remote: str
    remote_url: str
    branch: str
    base: str
    title: str
    body: str
    draft: bool = False
    worktree_path: Path | None = None


@dataclass
class PullRequest:
    """A pull request a forge opened: its URL (recorded on the session), and what it knows."""

    url: str
    forge: str = ""  # github, gitlab, ...
    number: int | None = None


@dataclass(frozen=True)
class SyncRule:
    """One rule of the shared source: ``rules/NAME.md`` (front matter stripped)."""

    name: str  # the file's stem: lowercase letters, digits, ``-`` and ``_``
    text: str  # the Markdown body
    description: str = ""  # front matter ``description``, if any
    path: Path | None = None  # the source file


@dataclass(frozen=True)
class SyncCommand:
    """One reusable prompt of the shared source: ``commands/NAME.md``.

    ``body`` uses the source syntax: ``$ARGUMENTS`` (everything the user typed after the
    command) and ``$1``…``$9`` (its first to ninth words, counted from 1 as in a shell; Claude
    Code 2.1 itself counts from ``$0``); an adapter translates them to its harness's syntax or
    says why it cannot.
    """

    name: str
    body: str
    description: str = ""
    argument_hint: str = ""  # front matter ``argument-hint``: shown by harnesses that show one
    path: Path | None = None


@dataclass(frozen=True)
class SyncHook:
    """One of the project's own hooks (``[[sync.hooks]]``): run ``command`` on ``event``.

    ``matcher`` is a regular expression on the harness's tool name (``""``: every tool; only for
    the tool events). The command runs through the harness's shell in the project directory.
    """

    event: str  # one of HOOK_EVENTS
    command: str
    matcher: str = ""
    timeout_secs: int = 60


@dataclass(frozen=True)
class SyncSource:
    """The project's shared sources, read and validated once by the core for every harness."""

    project_dir: Path
    instructions: str = ""  # the shared instructions file's text (``AGENTS.md`` by default)
    instructions_path: Path | None = None  # that file, when it exists
    rules: tuple[SyncRule, ...] = ()
    commands: tuple[SyncCommand, ...] = ()
    hooks: tuple[SyncHook, ...] = ()


@dataclass
class SurfaceFile:
    """One file a surface plan writes, in exactly one of three ways:

    * ``content``: the whole file is ecc's (a command file, a rule copy);
    * ``section``: ecc's own marked section of a file a person also edits (``CLAUDE.md``): the
      core writes it between ``<!-- BEGIN ecc sync: SURFACE -->`` and ``<!-- END ecc sync:
      SURFACE -->`` lines and never touches the rest;
    * ``merge``: a structured edit of a shared config file (``settings.json``): a pure function
      from the current text (None: no file) to the new text, which keeps everything not ecc's
      and replaces what an earlier sync put there. ``merge(merge(x)) == merge(x)``; an empty
      result means the file should not exist (ecc's entries were all it held).
    """

    path: Path  # absolute, inside the project
    content: str | None = None
    section: str | None = None
    merge: Callable[[str | None], str] | None = None


@dataclass
class SurfacePlan:
    """How one harness carries one surface of the source, and the files that gives."""

    mode: str  # one of SURFACE_MODES
    files: list[SurfaceFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each: translations, what is lost


@dataclass(frozen=True)
class SessionRecord:
    """What the store holds about one finished session, as an exporter receives it
    (``ecc_export_sessions``). Plain data read once: the exporter never reaches the store.

    * ``session``: the row as ``ecc status --json`` prints it (``id``, ``task``, ``harness``,
      ``state``, ``reason``, ``profile_name``, ``executor``, ``repo_root``, ``repo_url``,
      ``worktree_branch``, ``exit_code``, ``exit_signal``, ``input_tokens``,
      ``output_tokens``, ``cost_usd``, ``created_at``, ``started_at``, ``ended_at``…);
    * ``events``: oldest first, each ``kind`` (``transition`` for a state change, with
      ``from_state`` and ``to_state``), ``reason``, ``data`` and ``created_at``;
    * ``tool_calls``: oldest first, each ``tool``, ``input_json`` (the whole input, as
      recorded), ``input_excerpt`` (one line of it, at most 256 characters, common credential
      shapes masked: what to send elsewhere), ``score``, ``action`` (the risk's suggestion),
      ``reasons``, ``decision`` (what the harness was told, or ``observed``), ``call_id``,
      ``source`` and ``created_at``;
    * ``approvals``: the session's held calls, each ``id``, ``tool``, ``created_at``,
      ``decision``, ``decided_by`` and ``decided_at`` (None while undecided);
    * ``delivered``: this exporter already delivered this very end of the session (``ecc export
      --since`` sends it again): resend what a backend deduplicates (spans with the same ids),
      never what it would add up twice (counts).

    Times are ISO-8601 UTC text with milliseconds and ``Z``.
    """

    session: dict[str, Any]
    events: tuple[dict[str, Any], ...] = ()
    tool_calls: tuple[dict[str, Any], ...] = ()
    approvals: tuple[dict[str, Any], ...] = ()
    delivered: bool = False

    @property
    def id(self) -> str:
        return str(self.session["id"])


@dataclass(frozen=True)
class MemoryCandidate:
    """One active memory offered to a memory ranker (``ecc_memory_rerank``).

    ``text`` is what the memory says (title, tags and body, one per line) and ``digest`` the
    SHA-256 of that text: a ranker caching anything derived from the text keys it by ``digest``,
    so a changed memory is seen as new. ``index`` names the derived index of the memory's scope
    (``ecc_memory_rerank``'s ``whole_indexes`` lists those it was offered whole).
    """

    key: str  # opaque and unique in one call: what the ranker's answer names
    memory_id: str
    scope: str
    index: str
    digest: str
    text: str
    score: int  # the exact (lexical) search's score; 0 for a memory it did not match
