"""The whole plugin contract of ecc.

Every extension point is a hook declared here. A plugin is any module or object with functions
marked ``@ecc.hookimpl`` whose names and arguments match these specs (a plugin may take fewer
arguments than a spec offers, never others). Plugins are found through eight entry-point groups:

``ecc.adapters``         harnesses: command lines, env, profiles, resume, detection, output, hooks,
                         the shared rules, commands and hooks in each harness's own files
``ecc.risk_scorers``     contributions to the risk score of one tool call
``ecc.notifiers``        delivery of session, budget and approval events
``ecc.memory_backends``  storage of ``ecc.memory.v1`` documents
``ecc.executors``        where sessions run: this machine (``local``) or a worker pool
``ecc.forges``           code hosts: opening a pull request for a session's pushed branch
``ecc.exporters``        telemetry: sending what finished sessions recorded to another system
``ecc.memory_rankers``   re-ordering a memory search's results (``--semantic``)

A plugin implements only hooks of its own group's family (each spec's ``@family``;
``ecc_register_commands`` and ``ecc_doctor_checks`` belong to every group): ecc loads a group
when one of its hooks is called, so a plugin with a hook of another family is refused.
:data:`GROUPS` is the load order.

Hooks whose first argument is ``harness`` are *harness hooks*: ecc calls them only on the plugins
whose ``ecc_harnesses`` declares that harness (by canonical name), so an adapter never receives
another harness's calls and needs no check of its own. Hooks that pick one answer are
``firstresult``; ``ecc_memory_backend`` and ``ecc_executor`` receive a name and return ``None``
when it is not theirs. The data types passed in and out live in ``ecc.contract.types``. A
``config`` argument (and ``LaunchContext.config``) is the validated configuration as a read-only
view (``ecc.contract.types.ConfigLike``): attribute and mapping access work
(``config.harness_runners.get(name).program``); it is never the pydantic model.
"""

from __future__ import annotations

from ecc.contract.markers import family, hookimpl, hookspec

TYPE_CHECKING = False  # without importing typing: every plugin module imports this one
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    import click

    from ecc.contract.types import (
        Config,
        HarnessInfo,
        HookDecision,
        HookEvent,
        HookResponse,
        IntegrationRequest,
        IntegrationResult,
        LaunchContext,
        MemoryCandidate,
        Notification,
        OutputEvent,
        ProfileTranslation,
        PullRequest,
        PullRequestProposal,
        RiskContribution,
        SessionRecord,
        SurfacePlan,
        SyncSource,
        ToolCall,
    )
    from ecc.runtime.config.model import AgentProfile

__all__ = ["hookimpl", "hookspec"]  # the decorators plugins use (``ecc.contract.markers``)

ADAPTERS = "ecc.adapters"
EXECUTORS = "ecc.executors"
NOTIFIERS = "ecc.notifiers"
RISK_SCORERS = "ecc.risk_scorers"
MEMORY_BACKENDS = "ecc.memory_backends"
FORGES = "ecc.forges"
EXPORTERS = "ecc.exporters"
MEMORY_RANKERS = "ecc.memory_rankers"

# The entry-point groups and what one of their plugins is called, in the order they load: always
# as a prefix of this order, so the most used come first (``ecc run -d`` needs adapters and
# executors only) and pluggy calls implementations in the same order in every process.
GROUPS: dict[str, str] = {
    ADAPTERS: "adapter",
    EXECUTORS: "executor",
    NOTIFIERS: "notifier",
    RISK_SCORERS: "risk scorer",
    MEMORY_BACKENDS: "memory backend",
    FORGES: "forge",
    EXPORTERS: "exporter",
    MEMORY_RANKERS: "memory ranker",
}


# -- harness adapters (group ecc.adapters) ---------------------------------------------------


@hookspec
@family(ADAPTERS)
def ecc_harnesses(config: Config) -> list[HarnessInfo] | HarnessInfo | None:
    """Declare the harnesses this plugin runs.

    Called to resolve ``--harness NAME``, for ``ecc plugins`` and for the compliance matrix, and
    to know which plugins receive a harness's hooks. Return one
    :class:`ecc.contract.types.HarnessInfo` (or a list): its name, aliases, the program it runs
    and the surfaces it supports. Config-defined runners are declared by the built-in
    ``runners`` plugin.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    """Return the argv that runs ``launch.task`` non-interactively, or None if not yours.

    The task must be passed as its own argv element (never through a shell). The core runs the
    command in ``launch.working_dir`` with stdin from /dev/null and captures stdout and stderr.
    """


@hookspec
@family(ADAPTERS)
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str] | None:
    """Return environment variables for the harness process; all results are merged.

    The core's own ``ECC_*`` variables are applied first, then each answer in pluggy's call
    order (the most recently registered plugin first, ``trylast`` ones at the end), so the last
    one called wins a clash. Return None (or ``{}``) when there is nothing to add.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_translate_profile(
    harness: str, profile: AgentProfile, launch: LaunchContext
) -> ProfileTranslation | None:
    """Map an agent profile onto the harness's own flags.

    Return a :class:`ecc.contract.types.ProfileTranslation`: extra argv, text folded into the
    prompt for fields the CLI has no flag for, and fields refused because folding them would be
    unsafe. The core acts on ``refused`` only (the session fails naming them); applying the
    argv and the folded text is the adapter's own ``ecc_build_command``'s job.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str] | None:
    """Return the argv that continues an earlier run, or None if not yours.

    ``harness_session_id`` is the harness's own session id captured from its structured output
    (None when none was seen); an adapter without native resume re-runs the task.
    ``launch.task`` is the prompt of the continued run: the task for ``ecc resume``, the
    message for a follow-up (``ecc send``).
    """


@hookspec
@family(ADAPTERS)
def ecc_detect_harness(project_dir: Path, config: Config) -> list[str] | str | None:
    """Return the names of your harnesses that ``project_dir`` shows signs of using.

    Used to pick a default harness and for ``ecc harness matrix``. Look for marker files and
    directories (``.claude/``, ``AGENTS.md``, ``GEMINI.md``…); never run anything.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent] | None:
    """Turn one captured output line into session events (tool calls, usage, final answer...).

    Called for every line of a session; return None if the harness is not yours, ``[]`` for a line
    that carries no event. Must not raise on malformed lines: treat them as plain output.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    """Install or remove ecc's hooks, MCP server or skills in the harness's own configuration.

    ``request.kind`` is ``hooks``, ``mcp`` or ``skills``; ``request.action`` is ``install`` or
    ``uninstall``. Must be idempotent, keep every other setting and honour ``request.dry_run``
    (return the diff, write nothing). The adapter alone decides where each lands:

    * ``hooks``: ``request.options["command"]`` is how to run ecc; append ``hook --harness
      NAME`` to it in the harness's hook configuration.
    * ``mcp``: register the server ``ecc-memory`` whose argv is ``request.options["mcp_command"]``
      with ``ECC_MEMORY_HARNESS`` set to your harness (:mod:`ecc.portability.harnessfiles`
      edits JSON and TOML).
    * ``skills``: pick the harness's skills directory for ``request.scope`` and call
      :func:`ecc.portability.skillsync.sync_skills` (``request.options["source"]`` is the
      validated folder).

    Set ``IntegrationResult.location`` to the file or directory used (the matrix and
    ``--json`` show it). Raise :class:`ecc.contract.errors.EccError` for a file you cannot edit
    safely, leaving it untouched.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent | None:
    """Normalise the payload a harness hook sent to ``ecc hook --harness NAME`` (stdin, JSON).

    ``event`` is the event name given on the command line (``--event``), or ``""``. Return a
    :class:`ecc.contract.types.HookEvent` whose ``call`` is the tool call with ``kind`` set. Runs
    on every tool call with no config loaded: keep it fast, never raise
    on odd payloads (return ``phase="other"``). Implementations live in a module importable on its
    own (the hot path may load it without the adapter package).
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse | None:
    """Answer a hook in the harness's own protocol (exit code, stdout JSON, stderr).

    A ``deny`` must stop the tool and show ``decision.reason`` to the agent; an ``ask`` uses the
    harness's confirmation prompt where it has one. Return None if the harness is not yours.
    """


@hookspec(firstresult=True)
@family(ADAPTERS)
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    """Render one surface of the project's shared source into the harness's own files.

    ``surface`` is one of :data:`ecc.contract.types.SYNC_SURFACES`: ``rules`` (the shared
    instructions and ``source.rules``), ``commands`` (``source.commands``) or ``hooks`` (the
    project's own ``source.hooks``; ecc's risk hook is ``ecc_install_integration``'s and must
    survive every merge). Return a :class:`ecc.contract.types.SurfacePlan`: the mode (``native``,
    ``translated``, ``instruction-only`` or ``unsupported``), the files it gives and a note for
    whatever the harness cannot carry; None if the surface is not yours. Called by ``ecc sync``
    (which writes, records and removes the files), ``ecc sync --check`` and the compliance matrix
    (with an empty source): write nothing yourself, and give the same plan for the same source.
    None means not yours, and ``ecc sync`` then leaves the files an earlier sync recorded for the
    surface alone; a plan (even an empty one) replaces them, removing what it no longer gives.
    """


# -- risk scorers (group ecc.risk_scorers) --------------------------------------------------


@hookspec
@family(RISK_SCORERS)
def ecc_score_tool_call(call: ToolCall, config: Config) -> list[RiskContribution] | None:
    """Score one tool call an agent is about to make (or made).

    Return contributions, each a signed amount with a human reason; the core sums every scorer's
    contributions and clamps the total to 0..1. Runs on every tool call: keep it fast and pure.
    On the ``ecc hook`` hot path ``config`` is a read-only view of the same shape (attribute
    access such as ``config.risk.block`` works; model methods do not).
    """


# -- notifiers (group ecc.notifiers) --------------------------------------------------------


@hookspec
@family(NOTIFIERS)
def ecc_notify(notification: Notification, settings: dict[str, Any]) -> None:
    """Deliver one event. ``settings`` is the notifier's own ``[notifications.settings.NAME]``.

    Called once per selected notifier; an exception is caught, logged and does not stop the others.
    """


# -- memory backends (group ecc.memory_backends) --------------------------------------------


@hookspec(firstresult=True)
@family(MEMORY_BACKENDS)
def ecc_memory_backend(name: str, settings: dict[str, Any]) -> Any | None:
    """Return the storage object for the vault service if ``name`` is yours, else None.

    The object implements :class:`ecc.vault.backend.MemoryBackend`.
    """


# -- memory rankers (group ecc.memory_rankers) ----------------------------------------------


@hookspec(firstresult=True)
@family(MEMORY_RANKERS)
def ecc_memory_rerank(
    name: str,
    query: str,
    candidates: list[MemoryCandidate],
    whole_indexes: list[str],
    cache_dir: Path | None,
    settings: dict[str, Any],
) -> list[tuple[str, float]] | None:
    """Re-order a memory search's candidates if the ranker ``name`` is yours, else None.

    Called by ``ecc memory search --semantic`` (``name`` ``semantic``) and by every search when
    ``[memory] ranker`` names a ranker, with ``[memory.ranker_settings]`` as ``settings``; only
    the entry point called ``name`` is loaded. ``candidates``
    (:class:`ecc.contract.types.MemoryCandidate`) are the exact search's best matches in its
    order, then, in a vault small enough, the memories it did not match at all. Return
    ``(key, similarity)`` pairs, best first: the search keeps that order (cut to its limit) and
    shows each similarity; a candidate left out is not shown. ``cache_dir`` is the directory of
    the derived indexes (None when nothing may be written): keep what you derive there, keyed by
    the candidates' ``digest``; ``whole_indexes`` names the indexes every active memory of which
    is among the candidates, so entries of those that no candidate names may be forgotten.
    """


# -- executors (group ecc.executors) --------------------------------------------------------


@hookspec(firstresult=True)
@family(EXECUTORS)
def ecc_executor(name: str, config: Config) -> Any | None:
    """Return the executor called ``name`` if it is yours, else None.

    Called when a session is created (``ecc run --executor NAME``, default config ``executor``),
    submitted, stopped and judged by the daemon; the session row records the name, so any
    machine reaches the executor that ran it. The object implements
    :class:`ecc.sessions.executor.Executor`:

    * ``submit(session)`` places the session and returns at once. Whatever runs it calls
      ``ecc run-session`` (local) or :func:`ecc.sessions.runner.run_remote_session` (a worker),
      which claims the session at most once, streams lines and state into the store, heartbeats
      and records the exit. The engine must not retry or re-deliver on its own account; if it
      does, the claim refuses the copy and records a ``duplicate_refused`` event.
    * ``interrupt(session)`` is a best-effort fast stop (the engine's native cancel); the store's
      ``stop_requested`` flag is the truth.
    * ``is_local(session)`` says whether pids on this machine mean anything for the session.

    The engine's own task state is never read as session state: the store is the truth, and a
    session whose heartbeat is older than ``lease_seconds`` is failed by the reaper.
    """


# -- forges (group ecc.forges) --------------------------------------------------------------


@hookspec(firstresult=True)
@family(FORGES)
def ecc_open_pull_request(proposal: PullRequestProposal, config: Config) -> PullRequest | None:
    """Open a pull request for a session's pushed branch; return None if the remote is not yours.

    Called by ``ecc pr ID`` once the branch ``proposal.branch`` is on the remote
    ``proposal.remote`` (``proposal.remote_url``); the URL returned is recorded on the session.
    Raise :class:`ecc.contract.errors.EccError` with one line for a failure the user must fix
    (a CLI missing, not logged in, the host refusing). The built-in ``github`` plugin
    (``gh pr create``) is ``trylast``: every other forge is asked first.
    """


# -- exporters (group ecc.exporters) --------------------------------------------------------


@hookspec
@family(EXPORTERS)
def ecc_export_sessions(sessions: list[SessionRecord], config: Config) -> list[str] | None:
    """Send finished sessions' records to another system; return the ids of those delivered.

    ``sessions`` are terminal sessions this exporter has not delivered yet (or, for ``ecc
    export --since``, every one that ended since then), each a
    :class:`ecc.contract.types.SessionRecord`: the session row, its state changes and other
    events, its tool calls and its held-call approvals, read from the store. ecc remembers
    the ids returned (with the session's ``ended_at``) and offers the others again later: the
    runner calls this once its session is recorded as ended (on a thread, with a deadline: the
    session is never held up), the daemon on its passes for whatever is still undelivered, and
    ``ecc export`` on demand. Delivery is therefore at least once: derive every identifier you
    send from the records (never at random), so a repeat is recognisably the same.

    Return None (or ``[]``) when you deliver nothing, for instance when you are not configured;
    raise for a failure worth logging. Never prompt, never keep the caller longer than your own
    timeout.
    """


# -- any plugin ------------------------------------------------------------------------------


@hookspec
@family(*GROUPS)
def ecc_doctor_checks(config: Config) -> list[dict[str, Any]] | None:
    """Report whether what this plugin needs outside Python is there, for ``ecc doctor``.

    Called once by ``ecc doctor`` (it loads every group). Return a list of dicts, one a line:
    ``name`` (e.g. ``"notifier desktop"``), ``level`` (``"ok"``, ``"warn"``: works, but see
    ``fix``; or ``"fail"``), ``detail`` (what was found) and ``fix`` (one sentence saying how,
    when the level is not ok). Check cheaply (``shutil.which``, a file's existence), never a
    network call or a secret in ``detail``. A plugin that raises is reported as failed; the
    other plugins' checks still run.
    """


@hookspec
@family(*GROUPS)
def ecc_register_commands(cli: click.Group) -> None:
    """Add click commands to the ``ecc`` command line (as datasette and llm plugins do)."""
